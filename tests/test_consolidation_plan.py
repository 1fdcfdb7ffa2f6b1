"""A cluster's most representative episodes: the fast ranking picks what sorting every episode by the whole key picks."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from noemad.background.consolidation.proposition import PROMPT_EPISODES, Episodes, _most_representative
from noemad.background.consolidation.tokenise import strip_speaker

_texts = st.sampled_from(["a: go", "b: go", "a: select go", "no prefix", "x: ", "y:z: q", "bob said on cli: pick Go", "ab", "ü: ß"])


@given(st.lists(st.tuples(_texts, st.integers(0, 3), st.sampled_from(["2026-01-01", "2026-01-02"])), min_size=1, max_size=60))
@settings(max_examples=200, deadline=None)
def test_the_ranking_is_the_whole_key_sort(rows: list[tuple[str, int, str]]) -> None:
    texts = [t for t, _, _ in rows]
    hits = [h for _, h, _ in rows]
    created = [c for _, _, c in rows]
    ids = list(range(10, 10 + len(rows)))
    episodes = Episodes(ids, texts, created, ["s"] * len(rows), ids)
    whole = sorted(range(len(rows)), key=lambda i: (-hits[i], len(strip_speaker(texts[i])), strip_speaker(texts[i]), created[i], ids[i]))
    assert _most_representative(episodes, hits) == whole[:PROMPT_EPISODES]
