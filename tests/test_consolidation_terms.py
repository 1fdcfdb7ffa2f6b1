"""An episode's terms hold words, not the fragments contractions leave (issue 22, item 6).

"I'll pick Go for the parser" was cut into "ll", "pick" and "go", so five
such messages were generalised as "alice repeatedly mentioned ll, pick and
go", subject "go ll". The pieces an apostrophe leaves in the five languages
the detectors cover (English n't 'll 've 're 'd 'm 's, French l' d' j' qu'
c' n' s', Portuguese d', German 's) and the contracted function words
(Spanish del/al, French du/au/aux, Portuguese do/da/no/na/ao/pelo/num...,
German im/ins/zum/zur/beim/vom) are no terms.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st

from noemad.background.consolidation import episode_terms, term_table, terms
from noemad.words import NOT_TERMS, content_words, snowball_stems
from test_consolidation import DAY, NOW, Env

# (text, the content words it holds): contractions of each language, straight and curly apostrophes.
TABLE = [
    ("I'll pick Go for the parser", ["pick", "go", "parser"]),
    ("I’ll pick Go, we’ve shipped, they’re late, she'd go, I'm done, it's Bob's", ["pick", "go", "shipped", "late", "go", "done", "bob"]),
    ("don't deploy, it won't build, we can't wait, isn't ready, haven't tested, ain't broken", ["deploy", "build", "wait", "ready", "tested", "broken"]),
    ("Don won the haven award", ["don", "won", "haven", "award"]),  # the words themselves, where no apostrophe cut them
    ("l'équipe choisit Go parce qu'il compile, jusqu'à demain, c'est d'accord, n'importe, s'il, j'ai", ["équipe", "choisit", "go", "parce", "il", "compile", "demain", "est", "accord", "importe", "il", "ai"]),
    ("el equipo del proyecto elige Go al final", ["el", "equipo", "proyecto", "elige", "go", "final"]),
    ("wie geht's? Go im Team, zum Parser, zur Not, beim Build, vom Server, ins Netz", ["wie", "geht", "go", "team", "parser", "build", "server", "netz"]),
    ("copo d'água: escolhemos Go do início ao fim, na equipa, pelo parser, num dia", ["copo", "água", "escolhemos", "go", "início", "fim", "equipa", "parser", "dia"]),
    ("la qualité du code, au final, aux tests", ["la", "qualité", "code", "final", "tests"]),
]


@pytest.mark.parametrize(("text", "words"), TABLE)
def test_contractions_leave_no_fragment_among_the_words(text: str, words: list[str]) -> None:
    assert content_words(text) == words


@pytest.mark.parametrize(("text", "words"), TABLE)
def test_an_episodes_terms_cut_alone_or_in_bulk_hold_no_fragment(text: str, words: list[str]) -> None:
    one = terms(f"alice said on cli: {text}")
    bulk = episode_terms(["bob: x", f"alice said on cli: {text}", "carol: y"])[1]
    table = term_table([f"alice said on cli: {text}"])
    assert set(one) == set(bulk) == set(table.names) == set(snowball_stems(words))


_word = st.text(alphabet="abcdefghijklmnopqrstuvwxyzéü", min_size=3, max_size=10).filter(lambda w: content_words(w) == [w])
_apostrophe = st.sampled_from(["'", "’"])
# Elision comes before a vowel or a mute h: such words are drawn so, not filtered for (too few would pass a filter).
_vowel_word = st.builds(
    lambda first, rest: first + rest, st.sampled_from("aeiouéh"), st.text(alphabet="abcdefghijklmnopqrstuvwxyzéü", min_size=2, max_size=9)
).filter(lambda w: content_words(w) == [w])


@given(_word, _apostrophe, st.sampled_from(["ll", "ve", "re", "d", "m", "s", "t"]))
@settings(max_examples=200, deadline=None)
def test_a_word_with_an_english_or_german_clitic_is_the_word(word: str, apostrophe: str, clitic: str) -> None:
    assume(not (clitic == "t" and word.endswith("n")))  # n't is a negation (below)
    assert content_words(f"go {word}{apostrophe}{clitic} now") == ["go", word]


@given(_vowel_word, _apostrophe, st.sampled_from(["l", "d", "j", "qu", "c", "n", "s", "m", "t", "jusqu", "lorsqu", "puisqu", "quoiqu"]))
@settings(max_examples=200, deadline=None)
def test_a_word_with_a_french_or_portuguese_elision_is_the_word(word: str, apostrophe: str, elided: str) -> None:
    assert content_words(f"go {elided}{apostrophe}{word}") == ["go", word]


@given(_word, _apostrophe)
@settings(max_examples=100, deadline=None)
def test_a_negation_leaves_no_stem_behind(word: str, apostrophe: str) -> None:
    # "don't", "isn't", "haven't", "won't", ... are a verb and "not": both stop-words, no fragment.
    for verb in ("do", "does", "did", "is", "are", "was", "were", "has", "have", "had", "would", "could", "should", "wo", "ca", "ai"):
        assert content_words(f"{verb}n{apostrophe}t {word}") == [word]


def test_no_fragment_is_a_content_word() -> None:
    assert NOT_TERMS and content_words(" ".join(sorted(NOT_TERMS))) == []


def test_five_messages_with_ill_are_generalised_without_the_fragment(env: Env) -> None:
    for i, component in enumerate(("parser", "importer", "scheduler", "metrics service", "CLI")):
        env.say(f"I'll pick Go for the {component}", NOW - 10 * DAY + i * DAY)
    [c] = env.consolidate().clusters
    assert (c["terms"], c["subject"], c["pair"]) == (["pick", "go"], "go pick", ["go", "pick"])
    assert c["proposition"].startswith("alice repeatedly mentioned pick and go (5 episodes,")


@pytest.fixture
def env(tmp_path: Path) -> Iterator[Env]:
    e = Env(tmp_path / "n.db")
    yield e
    e.close()
