"""The intent of the message a draft answers: action, question, chat, or ambiguous.

Deterministic, in the languages the detectors know (`languages`):

- `action`: the message asks for something to be done: a request marker
  ("please", "can you", "por favor", "bitte", "s'il te plaît", "pode",
  "per favore") or a verb of doing ("send", "schedule", "envía", "schick",
  "envoie", "agende", …) anywhere in it; a question that asks for an action
  ("can you send it?") is an action;
- `question`: a question mark, or a question word first ("what", "cuándo",
  "warum", "pourquoi", "onde");
- `chat`: an acknowledgment or greeting, or any other message in a known
  language (it tells, it does not ask);
- `ambiguous`: empty, or in a language the detectors do not know.

Action and ambiguous fire review of the reply whatever the reply says: the
reply to a request may promise or claim what was not done.
"""

from __future__ import annotations

import re
from typing import Literal

from noemad.governance import languages
from noemad.governance.acks import ack_language
from noemad.governance.text import WORD, fold

Intent = Literal["action", "question", "chat", "ambiguous"]
INTENTS: tuple[Intent, ...] = ("action", "question", "chat", "ambiguous")

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
    if _MARKERS.search(folded) or any(w in languages.ACTION_VERBS for w in found):
        return "action"
    if "?" in message or "¿" in message or "？" in message or (found and found[0] in languages.QUESTION_STARTS):
        return "question"
    if any(w in _KNOWN_WORDS for w in found):
        return "chat"
    return "ambiguous"
