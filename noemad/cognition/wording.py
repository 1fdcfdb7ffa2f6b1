"""The wording guard: a model may reword a plain text; its wording is kept only if it adds nothing.

A caller has a plain, deterministic text (a narrative, a reflection, a
cluster's generalisation) and the evidence it was made from. `reword` asks a
model for a rewording and returns a `Worded`: the model's text if the check
finds nothing added, else the plain text and the reason. It never raises a
`ModelError`: a call refused or failed (no model, a budget, a hold, a pause,
an error) leaves the plain text too (`refusal_reason`).

Reasons a text stays plain, from here: `no_model`, `budget`, `held`,
`refused`, `model_error` (no answer), `truncated` (the answer ran out of
tokens), `empty_answer`, `unsupported_content` (the check objected). A
caller adds its own before asking (e.g. `no_calls`, `empty_period`).

What "adds nothing" means (`Support.added`): every number in the answer (a
run of digits with inner . : , / -, after NFKC folding) appears among the
numbers of the supporting texts, and every content word of the answer has a
key among theirs (or among the vocabulary's free words). Two vocabularies:

- `PROSE` (narrative, reflection): the text is folded (NFKC, casefold, curly
  apostrophes, contractions expanded: n't → not, 'm → am, …; a trailing 's
  dropped); words are runs of letters; `FUNCTION_WORDS` (articles, pronouns
  of the first person, auxiliaries, prepositions, conjunctions and a few
  framing adverbs) are free; the key folds plurals (ies → y, es after
  s/x/z/ch/sh, s). Negations, quantifiers, modals other than will/would and
  new names are content words, so they must be in the source. Reordering,
  joining sentences and contracting pass; a new claim or number does not.
- `STEMS` (consolidation): `noemad.words.content_words` (stop-words
  dropped) keyed by their Snowball stems, as consolidation's terms are; the
  caller names its free words.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Literal

from noemad.words import content_words, snowball_stems
from noemad.errors import BudgetExceeded, ModelError, NoModelConfigured, Refused

if TYPE_CHECKING:
    from noemad.models import Prompt
    from noemad.models.gateway import ModelGateway

RenderedBy = Literal["plain", "model"]
MAX_SHOWN = 8  # added words a detail line names


# --- folding and numbers -----------------------------------------------------------------

_APOSTROPHES = str.maketrans({"’": "'", "‘": "'", "ʼ": "'"})
_CONTRACTIONS = (
    (re.compile(r"\bwon't\b"), "will not"),
    (re.compile(r"\bcan't\b"), "can not"),
    (re.compile(r"n't\b"), " not"),
    (re.compile(r"'m\b"), " am"),
    (re.compile(r"'re\b"), " are"),
    (re.compile(r"'ve\b"), " have"),
    (re.compile(r"'ll\b"), " will"),
    (re.compile(r"'d\b"), " would"),
    (re.compile(r"'s\b"), ""),
)
_NUMBER = re.compile(r"\d+(?:[.:,/-]\d+)*")
_LETTERS = re.compile(r"[^\W\d_]+")


def fold(text: str) -> str:
    """NFKC, casefold, straight apostrophes, contractions expanded."""
    text = unicodedata.normalize("NFKC", text).casefold().translate(_APOSTROPHES)
    for pattern, replacement in _CONTRACTIONS:
        text = pattern.sub(replacement, text)
    return text


def numbers(text: str) -> list[str]:
    """The numbers of `text` (folded first, so a full-width 4 is a 4), in order, repeats kept."""
    return _NUMBER.findall(fold(text))


# --- vocabularies --------------------------------------------------------------------------

FUNCTION_WORDS = frozenset(
    """
    a an the i me my mine myself we us our ours
    am is are was were be been being have has had having do does did doing will would
    to of in on at by for from with about as into onto over under after before until since while during through
    than then so and or but nor if that this these those it its there here
    which who whom whose what whether when where how why
    also too still now currently meanwhile next recently lately just yet again
    """.split()
)


def plural_key(word: str) -> str:
    """Plurals folded: ies → y, es after s/x/z/ch/sh, s (not ss, us, is)."""
    if len(word) > 4 and word.endswith("ies"):
        return word[:-3] + "y"
    if len(word) > 3 and word.endswith("es") and word[:-2].endswith(("s", "x", "z", "ch", "sh")):
        return word[:-2]
    if len(word) > 3 and word.endswith("s") and not word.endswith(("ss", "us", "is")):
        return word[:-1]
    return word


@dataclass(frozen=True)
class Vocabulary:
    """How a text becomes the words a check compares: its content words and each one's key."""

    words: Callable[[str], list[str]]  # the words, numbers left out (they are checked whole)
    keys: Callable[[list[str]], list[str]]  # one key per word
    free: frozenset[str] = frozenset()  # words an answer may use though no source does

    def keys_of(self, texts: Iterable[str]) -> set[str]:
        return set(self.keys([w for text in texts for w in self.words(text)]))


def _prose_words(text: str) -> list[str]:
    return _LETTERS.findall(_NUMBER.sub(" ", fold(text)))


def _stem_words(text: str) -> list[str]:
    return [w for w in content_words(text) if not w.isdigit()]


PROSE = Vocabulary(_prose_words, lambda words: [plural_key(w) for w in words], FUNCTION_WORDS)
STEMS = Vocabulary(_stem_words, snowball_stems)


@dataclass(frozen=True)
class Added:
    """What an answer says that its support does not: numbers and words, each once, in the answer's order."""

    numbers: tuple[str, ...]
    words: tuple[str, ...]

    def __bool__(self) -> bool:
        return bool(self.numbers or self.words)

    @property
    def all(self) -> tuple[str, ...]:
        return tuple(dict.fromkeys((*self.numbers, *self.words)))


@dataclass(frozen=True)
class Support:
    """What a rewording may say: the keys and numbers of the plain text and the evidence."""

    vocabulary: Vocabulary
    keys: frozenset[str]
    numbers: frozenset[str]

    @classmethod
    def of(
        cls, vocabulary: Vocabulary, texts: Iterable[str], *, keys: Iterable[str] = (), numbers_from: Iterable[str] | None = None
    ) -> Support:
        """Support from `texts` (their words and numbers), plus `keys` a caller has already (e.g. stems it computed).

        `numbers_from` replaces `texts` as the source of numbers when given.
        """
        texts = list(texts)
        found = {n for text in (texts if numbers_from is None else numbers_from) for n in numbers(text)}
        return cls(vocabulary, frozenset(vocabulary.keys_of(texts)) | frozenset(keys), frozenset(found))

    def added(self, answer: str) -> Added:
        """The answer's numbers and words this support does not hold."""
        new_numbers = [n for n in numbers(answer) if n not in self.numbers]
        words = self.vocabulary.words(answer)
        free = self.vocabulary.free
        new_words = [w for w, k in zip(words, self.vocabulary.keys(words)) if w not in free and k not in self.keys]
        return Added(tuple(dict.fromkeys(new_numbers)), tuple(dict.fromkeys(new_words)))


def shown(items: Sequence[str], quote: bool = False) -> str:
    """At most MAX_SHOWN items, comma-separated, with an ellipsis if there are more."""
    parts = [repr(i) if quote else i for i in items[:MAX_SHOWN]]
    return ", ".join(parts) + (", …" if len(items) > MAX_SHOWN else "")


@dataclass(frozen=True)
class Objection:
    """Why a check refused an answer: sentences a human reads, and what the answer added."""

    why: tuple[str, ...]
    added: tuple[str, ...] = ()

    @property
    def detail(self) -> str:
        return "; ".join(self.why)


def adds_nothing(support: Support, says: str) -> Callable[[str], Objection | None]:
    """The plain check: refuse an answer that adds anything, with `says` ("the rewording says what the X does not")."""

    def check(answer: str) -> Objection | None:
        added = support.added(answer).all
        return Objection((f"{says}: {shown(added)}",), added) if added else None

    return check


# --- asking ---------------------------------------------------------------------------------


@dataclass(frozen=True)
class Worded:
    """The outcome of a rewording: the text to show, who rendered it and, if plain, why."""

    text: str
    rendered_by: RenderedBy
    reason: str | None = None  # why plain (see the module docstring)
    detail: str | None = None
    call_id: int | None = None  # the model call, when one was recorded (made, refused or failed)
    model: str | None = None
    unsupported: tuple[str, ...] = ()  # what a refused answer added
    why: tuple[str, ...] = ()  # why an answer was refused, one sentence each
    answer: str | None = None  # the model's answer, kept or not

    @classmethod
    def plain(cls, text: str, reason: str, detail: str, call_id: int | None = None) -> Worded:
        """The plain text, not asked for or not answered."""
        return cls(text, "plain", reason, detail, call_id)

    @property
    def discarded(self) -> bool:
        """An answer came and was not kept."""
        return self.answer is not None and self.rendered_by == "plain"


def refusal_reason(exc: ModelError) -> str:
    """Why a failed or refused model call left the text plain: no_model, budget, held, refused or model_error."""
    if isinstance(exc, NoModelConfigured):
        return "no_model"
    if isinstance(exc, BudgetExceeded):
        return "budget"
    if isinstance(exc, Refused):
        return "held" if exc.until else "refused"
    return "model_error"


def unquote(text: str) -> str:
    """A model's answer without the quotes it may have wrapped it in."""
    text = text.strip()
    for left, right in (('"', '"'), ("“", "”"), ("'", "'")):
        if len(text) > 1 and text.startswith(left) and text.endswith(right):
            return text[1:-1].strip()
    return text


async def reword(
    gateway: ModelGateway,
    prompt: Prompt,
    plain: str,
    check: Callable[[str], Objection | None],
    *,
    on_call: Callable[[int | None], None] | None = None,
) -> Worded:
    """Ask `prompt`'s role to reword `plain`; keep its answer only if it is whole and `check` finds nothing in it.

    `on_call` is told of every call recorded (made, refused or failed).
    Never raises a `ModelError`.
    """
    try:
        response = await gateway.complete(prompt)
    except ModelError as exc:
        if on_call is not None:
            on_call(exc.call_id)
        return Worded.plain(plain, refusal_reason(exc), exc.detail, exc.call_id)
    if on_call is not None:
        on_call(response.call_id)
    answer = unquote(response.text)

    def refused(reason: str, objection: Objection) -> Worded:
        return Worded(
            plain, "plain", reason, objection.detail, response.call_id, response.model, objection.added, objection.why, answer
        )

    if response.stop_reason == "max_tokens":
        return refused("truncated", Objection((f"the {prompt.role} model ran out of tokens before it finished",)))
    if not answer:
        return refused("empty_answer", Objection((f"the {prompt.role} model answered nothing",)))
    objection = check(answer)
    if objection is not None:
        return refused("unsupported_content", objection)
    return Worded(answer, "model", call_id=response.call_id, model=response.model, answer=answer)

