"""The intent of the message a draft answers: action, question, chat, or ambiguous.

Deterministic, in the languages the detectors know (`languages`):

- `action`: the message asks for something to be done: a request marker
  ("please", "can you", "por favor", "bitte", "s'il te plaît", "pode",
  "per favore") or a verb of doing ("send", "schedule", "envía", "schick",
  "envoie", "agende", …) anywhere in it; a question that asks for an action
  ("can you send it?") is an action;
- `question`: a question mark of any script (`text.QUESTION_MARKS`: "?",
  "¿", "？", "؟", "՞", "፧", and ";" in Greek text), or an interrogative form
  without one: a question word or a verb first ("what", "is", "cuándo",
  "warum", "hast", "pourquoi", "as-tu", "onde", "что", "هل"), an opening
  ("do you know", "es cierto que", "weißt du"), a phrase anywhere
  ("est-ce que", "será que", "ли"), a tag after a comma ("…, right",
  "…, verdad", "…, oder", "…, non", "…, né"), a particle of Chinese,
  Japanese or Korean ("吗", "ですか", "까요") or a Chinese "A不A";
- `chat`: an acknowledgment or greeting, or any other message in a known
  language (it tells, it does not ask);
- `ambiguous`: empty, or in a language the detectors do not know.

Action and ambiguous fire review of the reply whatever the reply says: the
reply to a request may promise or claim what was not done. So does
question: the reply to a question is an answer, and an answer is an
assertion, however much it reads like an acknowledgment ("Of course",
"Claro que sí", "Natürlich", "Bien sûr", "Com certeza").
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Literal

from noemad.governance import languages
from noemad.governance.acks import ack_language
from noemad.governance.text import QUESTION_MARKS, WORD, fold

Intent = Literal["action", "question", "chat", "ambiguous"]
INTENTS: tuple[Intent, ...] = ("action", "question", "chat", "ambiguous")

_GREEK = re.compile("[\u0370-\u03ff\u1f00-\u1fff]")
_PHRASES = re.compile(r"(?<![\w'-])(?:" + "|".join(re.escape(p) for p in languages.QUESTION_PHRASES) + r")(?![\w'-])")
_OPENINGS = re.compile(r"(?:" + "|".join(re.escape(p) for p in languages.QUESTION_OPENINGS) + r")(?![\w'-])")
_TAGS = re.compile(r",\s*(?:" + "|".join(re.escape(t) for t in languages.QUESTION_TAGS) + r")\s*[.!…]*\s*$")
_CASELESS = re.compile(languages.CASELESS_QUESTION)
_INVERTED = re.compile(r"[^\W\d_]+-(?:t-)?(?:je|tu|il|elle|on|nous|vous|ils|elles)")
_MARKERS = re.compile(r"(?<![\w'])(?:" + "|".join(re.escape(m) for m in languages.ACTION_MARKERS) + r")(?![\w'])")
# A message in a known language holds one of its common words, or a word of its acknowledgments.
_KNOWN_WORDS = frozenset().union(*languages.FUNCTION_WORDS.values()) | frozenset(
    word for lang in ("en", "es", "de", "fr", "pt", "it", "nl") for phrase in languages.ACK_CLAUSES[lang] for word in phrase.split()
) - {"ok", "okay", "k", "kk"}


def classify_intent(message: str) -> Intent:
    """What `message` asks of the mind (see the module)."""
    if not message.strip():
        return "ambiguous"
    if ack_language(message) is not None:
        return "chat"
    folded = fold(message).replace("’", "'")
    found = WORD.findall(folded)
    if _MARKERS.search(folded) or _requests(message, found):
        return "action"
    if asks(message, folded, found):
        return "question"
    if any(w in _KNOWN_WORDS for w in found):
        return "chat"
    return "ambiguous"


def _requests(message: str, found: list[str]) -> bool:
    """Whether a verb of doing is asked for: not as a noun after a determiner ("the fix", "my email"), nor in the past
    tense Spanish and French mark with a final accent ("mandé", "envoyé"), which folding would make "mande", "envoye"."""
    if not any(w in languages.ACTION_VERBS for w in found):
        return False
    written = WORD.findall(message.casefold())
    if len(written) != len(found):
        written = found  # folding changed the words: judge them as folded
    for i, word in enumerate(found):
        if word not in languages.ACTION_VERBS:
            continue
        if i > 0 and (found[i - 1] in languages.DETERMINERS or found[i - 1].endswith("'")):
            continue
        last = written[i][-1:]
        if last and last in "éèóáíú":
            continue
        return True
    return False


def batch_intent(messages: Sequence[str]) -> Intent:
    """The most decisive intent among `messages` answered at once (action, then ambiguous, question, chat)."""
    found = {classify_intent(m) for m in messages}
    return next((i for i in ("action", "ambiguous", "question", "chat") if i in found), "ambiguous")


def asks(message: str, folded: str | None = None, found: list[str] | None = None) -> bool:
    """Whether `message` asks something: a question mark of any script, or an interrogative form (see the module)."""
    if QUESTION_MARKS.search(message) or (";" in message and _GREEK.search(message)):
        return True
    if folded is None:
        folded = fold(message).replace("’", "'")
    if found is None:
        found = WORD.findall(folded)
    if found and (
        found[0] in languages.QUESTION_STARTS
        or (found[0] in languages.QUESTION_VERBS and len(found) > 1 and found[1] in languages.QUESTION_SUBJECTS)
    ):
        return True
    if found and _INVERTED.fullmatch(found[0]):
        return True  # French inversion: "avez-vous", "peut-on", "a-t-il"
    opening = folded.lstrip(" \"'¡-")
    if _OPENINGS.match(opening) or _PHRASES.search(folded) or _TAGS.search(folded):
        return True
    return _CASELESS.search(message) is not None
