"""The governance detectors, table-driven per language (acks and risky drafts side by side) and with hypothesis properties.

The promise they keep together: a draft is skipped only when it is, whole,
a short claim-free acknowledgment in a recognized language; a risky draft
in any language is never an ack.
"""

from __future__ import annotations

import sys
import unicodedata

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from noemad.governance import (
    GovernanceCapability,
    GovernanceSubject,
    TurnEvidence,
    batch_intent,
    draft_claims,
    classify_intent,
    draft_has_claims,
    draft_is_trivial_ack,
    fabrication_findings,
)
from noemad.governance import acks
from noemad.governance.emoji import CLASSES, REACTIONS, emoji_class, examples
from noemad.governance.languages import ACK_CLAUSES, YES_WORDS

# language: (acks that skip, risky drafts that fire)
CORPUS: dict[str, tuple[list[str], list[str]]] = {
    "en": (
        ["Got it, thanks!", "Got it, scheduling that", "Sounds good.", "Will do!", "No worries", "You're welcome 🙂",
         "Thanks for the heads up!", "Understood, will do.", "OK", "Perfect, thank you so much!", "On it.", "Yes, will do", "Sounds good to me.",
         "Right, got it.", "Okay, I'll take a look."],
        ["Done, sent it to Alice.", "The invoice is $1,200.", "Got it, I'll book it for Friday.", "Sure, see https://x.io",
         "Got it, 3 tickets booked.", "Thanks, Bob!", "Revenue grew twenty percent.", "Yes", "Done.",
         "According to the report, it shipped.", "Noted, the hash is deadbeefcafe.", "Got it, ping me at a@b.co", "Right.",
         "That's correct.", "I already sent it."],
    ),
    "es": (
        ["Vale, gracias", "¡Entendido!", "Claro que sí, con gusto.", "De acuerdo, me encargo.", "Muchas gracias 👍",
         "Perfecto, gracias por avisar.", "De nada", "Gracias a ti.", "Me parece bien."],
        ["¡Hecho!", "Listo, gracias.", "Vale, lo envío mañana.", "Entendido, son veinte euros.", "Listo, ya lo pagué.", "Gracias, Marta.",
         "Según el informe, subió un 5%.", "Claro, a las tres."],
    ),
    "de": (
        ["Alles klar, danke dir!", "Danke für die Info, ich kümmere mich darum.", "Verstanden.", "Geht klar, danke!",
         "Kein Problem", "Perfekt, danke Ihnen!", "Guten Morgen!", "Vielen Dank für den Hinweis.", "Klingt gut!"],
        ["Ich habe Müller angerufen.", "Alles klar, das kostet dreißig Euro.", "Erledigt, am Montag um 9 Uhr.",
         "Danke, Frau Schmidt!", "Laut Bericht sind es einundzwanzig.", "Geht klar, morgen früh."],
    ),
    "fr": (
        ["D'accord, merci !", "Ça marche, merci beaucoup !", "Bien reçu.", "Je m'en occupe.", "Pas de souci 👍",
         "Parfait, merci pour l'info.", "Très bien, merci."],
        ["D'accord, c'est fait pour lundi.", "Merci, Camille !", "Selon Le Monde, c'est vrai.", "Ça coûte cinquante euros.",
         "Entendu, demain à midi."],
    ),
    "pt": (
        ["Pode deixar, obrigado!", "Muito obrigada!", "Entendido.", "Combinado, valeu!", "Sem problemas", "Beleza, obrigado."],
        ["Certo, transferi R$ 300.", "Obrigado, João!", "Feito, amanhã às dez.", "Segundo o relatório, caiu três por cento.",
         "Entendido, o pedido #4411 saiu."],
    ),
    "it": (["Va bene, grazie!", "Perfetto, me ne occupo."], ["Va bene, costa dieci euro.", "Grazie, Giulia!"]),
    "nl": (["Prima, dank je wel!", "Begrepen."], ["Prima, morgen om tien uur.", "Dank je, Pieter!"]),
    "ja": (["了解しました", "ありがとうございます"], ["了解です、明日やります", "田中さんに送りました", "トヨタに連絡しました"]),
    "zh": (["好的", "收到"], ["好的，我明天发给王经理", "已经转账三百元"]),
}

# Acknowledgments in languages the detectors do not know: they fire (an unrecognized ack is not trivial).
UNRECOGNIZED = ["Tack så mycket!", "Takk!", "Dziękuję bardzo", "Teşekkürler", "Köszönöm", "Asante sana", "شكرا", "תודה רבה",
                "धन्यवाद", "ขอบคุณครับ", "감사합니다", "Kiitos!"]

ACKS = [(lang, d) for lang, (acks, _) in CORPUS.items() for d in acks]
RISKY = [(lang, d) for lang, (_, risky) in CORPUS.items() for d in risky]


@pytest.mark.parametrize(("lang", "draft"), ACKS)
def test_an_acknowledgment_in_a_recognized_language_is_trivial(lang: str, draft: str) -> None:
    assert not draft_has_claims(draft), draft_claims(draft)
    assert draft_is_trivial_ack(draft)


@pytest.mark.parametrize(("lang", "draft"), RISKY)
def test_a_risky_draft_is_never_trivial(lang: str, draft: str) -> None:
    assert not draft_is_trivial_ack(draft)


@pytest.mark.parametrize("draft", UNRECOGNIZED)
def test_an_ack_in_an_unrecognized_language_is_not_trivial(draft: str) -> None:
    assert not draft_is_trivial_ack(draft)


@pytest.mark.parametrize(
    ("draft", "kind"),
    [
        ("It is 42.", "number"),
        ("It is ٤٢.", "number"),  # Arabic-Indic digits are digits
        ("It costs €.", "money"),
        ("Up ten percent", "spelled_number"),
        ("Es sind dreihundert", "spelled_number"),
        ("Es sind einundzwanzig", "spelled_number"),
        ("C'est quatre-vingts", "spelled_number"),
        ("That is half", "spelled_number"),
        ("It rose 5%", "percent"),
        ("It rose five per cent", "spelled_number"),
        ("See you on Tuesday", "date"),
        ("Hasta el lunes", "date"),
        ("Bis morgen", "date"),
        ("version v2.1", "number"),
        ("see https://example.com/x", "url"),
        ("mail me at ana@example.org", "email"),
        ("it is in ~/notes/todo", "path"),
        ("check src/main.py", "path"),
        ("ref #deploy", "id"),
        ("commit deadbeefcafe", "id"),
        ("the key user_id", "id"),
        ("as [Smith] shows", "citation"),
        ("according to the paper", "citation"),
        ("it said “yes”", "citation"),
        ("I met Alice", "entity"),
        ("we use the API", "entity"),
        ("it runs on iPhone", "entity"),
        ("ask @ana", "entity"),
        ("Ich habe Müller angerufen", "entity"),
        ("トヨタに連絡しました", "entity"),
        ("王经理说可以", "entity"),
    ],
)
def test_each_kind_of_claim_is_found(draft: str, kind: str) -> None:
    assert kind in {c.kind for c in draft_claims(draft)}, draft_claims(draft)


@pytest.mark.parametrize(
    "draft",
    ["Danke für die Info", "Danke Ihnen für Ihre Geduld", "Got it, thanks", "Guten Morgen", "D'accord, merci", "I see, I'll do it"],
)
def test_capitals_alone_are_not_names(draft: str) -> None:
    # German capitalises every noun and the formal "Sie"; English capitalises "I".
    assert not draft_has_claims(draft), draft_claims(draft)


@pytest.mark.parametrize(
    ("message", "intent"),
    [
        ("Please schedule the review for Friday", "action"),
        ("Can you send me the file?", "action"),
        ("¿Puedes enviarlo?", "action"),
        ("Bitte schick mir den Bericht", "action"),
        ("Envoie-moi le rapport s'il te plaît", "action"),
        ("Por favor, agende a reunião", "action"),
        ("What time is it?", "question"),
        ("¿Cuándo llega?", "question"),
        ("Warum ist das so?", "question"),
        ("Is the loan approved", "question"),
        ("Hast du das Backup geprüft", "question"),
        ("Est-ce que la sauvegarde est finie", "question"),
        ("Avez-vous reçu le dossier", "question"),
        ("Será que o backup terminou", "question"),
        ("The loan is approved, right", "question"),
        ("Lo firmaste, ¿no", "question"),
        ("Das passt so, oder", "question"),
        ("Tá tudo certo, né", "question"),
        ("هل اكتمل النسخ الاحتياطي؟", "question"),
        ("Ολοκληρώθηκε το αντίγραφο;", "question"),
        ("Պահուստը պատրա՞ստ է", "question"),
        ("备份完成了吗", "question"),
        ("是不是已经好了", "question"),
        ("大丈夫ですか", "question"),
        ("Готово ли", "question"),
        ("The loan is approved.", "chat"),
        ("Das Backup ist fertig.", "chat"),
        ("Thanks for the help!", "chat"),
        ("Gracias por todo", "chat"),
        ("The build went green.", "chat"),
        ("Das ist ein schöner Tag", "chat"),
        ("明天见", "ambiguous"),
        ("Hyvää huomenta kaikille", "ambiguous"),
        ("", "ambiguous"),
    ],
)
def test_intent_of_the_message(message: str, intent: str) -> None:
    assert classify_intent(message) == intent


def test_every_question_mark_unicode_has_is_one() -> None:
    marks = [chr(c) for c in range(sys.maxunicode + 1) if unicodedata.category(chr(c)) in ("Po", "So")
             and ("QUESTION MARK" in unicodedata.name(chr(c), "") or "INTERROBANG" in unicodedata.name(chr(c), ""))]
    assert len(marks) > 20
    for mark in marks:
        assert classify_intent(f"Backup fertig{mark}") == "question", unicodedata.name(mark)
        assert not draft_is_trivial_ack(f"Got it{mark}"), unicodedata.name(mark)


def test_batch_intent_is_the_most_decisive_of_the_messages_answered_at_once() -> None:
    assert batch_intent(["Is the loan approved?", "Thanks for the update!"]) == "question"
    assert batch_intent(["Thanks!", "Please send the report"]) == "action"
    assert batch_intent(["Thanks!", "Good morning"]) == "chat"


def test_fabrication_findings_are_the_claims_nothing_supports() -> None:
    evidence = ["alice asked for the invoice of 1200 dollars", "Ticket #77 is open"]
    found = fabrication_findings("Sent Alice the invoice for 1,200 and Bob the one for 950; see #77 and #78.", evidence)
    assert {(f.kind, f.text) for f in found} == {("number", "950"), ("number", "78"), ("entity", "Bob"), ("id", "#78")}
    assert fabrication_findings("Sent Alice the invoice for 1,200.", evidence) == ()


def test_adopter_patterns_add_acks_but_never_admit_a_claim() -> None:
    assert not draft_is_trivial_ack("Roger wilco")
    assert draft_is_trivial_ack("Roger wilco", [r"roger wilco"])
    assert not draft_is_trivial_ack("Roger wilco 7", [r"roger wilco.*"])


# --- properties -----------------------------------------------------------------------

ALL_ACKS = [d for _, d in ACKS]
RISKS = st.one_of(
    st.integers(0, 10**9).map(str),
    st.sampled_from(["Alice", "Müller", "OpenAI", "NASA", "Camille", "João", "Bob"]),
    st.from_regex(r"[0-9a-f]{7,12}", fullmatch=True),
    st.from_regex(r"#[a-z]{2,8}[0-9]{1,4}", fullmatch=True),
    st.sampled_from(["https://example.com", "www.acme.io", "docs.python.org"]),
    st.builds(lambda s, n: f"{s}{n}", st.sampled_from(["$", "€", "£", "¥", "R$ "]), st.integers(1, 99999)),
    st.sampled_from(["ana@example.org", "~/notes", "[1]", "12%", "tomorrow", "mañana", "demain", "drei", "Friday"]),
)


@settings(max_examples=300, deadline=None)
@given(st.sampled_from(ALL_ACKS), RISKS, st.sampled_from([", ", " ", " — ", ". ", " and "]), st.booleans())
def test_adding_a_claim_to_an_acknowledgment_makes_it_fire(ack: str, risk: str, glue: str, before: bool) -> None:
    draft = f"{risk}{glue}{ack}" if before else f"{ack}{glue}{risk}"
    assert not draft_is_trivial_ack(draft)
    capability = GovernanceCapability.compose()
    assert capability.decide(GovernanceSubject(draft), TurnEvidence(message="thanks")).fire


@settings(max_examples=500, deadline=None)
@given(st.text(max_size=80))
def test_nothing_skips_unless_it_is_an_ack(draft: str) -> None:
    decision = GovernanceCapability.compose().decide(GovernanceSubject(draft))
    if not decision.fire:
        assert draft_is_trivial_ack(draft) and not draft_has_claims(draft)


def _languages(clause: str) -> set[str]:
    """Every language `clause` alone is an ack of, as the detector reads it (normalised, strung phrases included)."""
    found = set()
    for lang in ACK_CLAUSES:
        counts = [[n for s in acks._spellings(c) if (n := acks._count(s, lang)) is not None] for c in acks._clauses(clause)]
        # As the detector reads a draft: each part an ack or a yes-word of the language, at least one an ack.
        if counts and all(counts) and sum(max(c) for c in counts) > 0:
            found.add(lang)
    return found


@settings(max_examples=200, deadline=None)
@given(st.lists(st.sampled_from([c for phrases in ACK_CLAUSES.values() for c in phrases]), min_size=1, max_size=4))
def test_a_mix_of_languages_is_not_an_ack_of_any(parts: list[str]) -> None:
    draft = ", ".join(parts)
    if draft_is_trivial_ack(draft):
        # Yes-words ("ja", "jawohl", "oui") go beside an ack clause of any language ("got it, jawohl"): they do not count.
        # A clause belongs to every language it is an ack of, strung phrases included: "claro claro" is Portuguese too.
        langs = [_languages(p) for p in parts if p not in YES_WORDS]
        assert not langs or set.intersection(*langs) or any(p in ("ok", "okay") for p in parts)


# --- emoji: a reaction beside an ack, or content ----------------------------------------------

MEANINGFUL = ["Got it ✅", "Ok 🚀", "Got it ❌", "Noted ⚠️", "Thanks 🛑", "Ok 👎", "Vale ✔️", "Alles klar 🔥", "D'accord 🚨",
              "Beleza 💰", "Noted 🇩🇪", "Ok 3️⃣", "Got it ⏰", "Got it 🟢", "Thanks ❤️‍🔥", "✅", "🚀", "👎"]
REACTING = ["Got it 👍", "Thanks 🙏", "Ok 👌", "Noted 🙂", "Gracias 😊", "Danke ❤️", "Merci 🤝", "Valeu 👍🏽", "Thanks 😅",
            "👍", "🙏🙏", "😊"]


def test_a_chinese_ack_of_two_closed_phrases_is_no_name() -> None:
    assert draft_is_trivial_ack("好的，没问题") and not draft_has_claims("好的，没问题")
    assert draft_has_claims("好的，王经理")


@pytest.mark.parametrize("draft", MEANINGFUL)
def test_an_emoji_that_carries_meaning_is_content(draft: str) -> None:
    assert not draft_is_trivial_ack(draft)
    assert "emoji" in {c.kind for c in draft_claims(draft)}
    decision = GovernanceCapability.compose().decide(GovernanceSubject(draft), TurnEvidence(message="Thanks for the update"))
    assert decision.fire and decision.trigger == "draft_claim"


@pytest.mark.parametrize("draft", REACTING)
def test_a_reaction_beside_an_ack_is_still_an_ack(draft: str) -> None:
    assert draft_is_trivial_ack(draft) and not draft_has_claims(draft), draft_claims(draft)


def test_every_symbol_has_a_class_and_only_reactions_sit_beside_an_ack() -> None:
    for code in range(0x2000, 0x1FBFF):
        char = chr(code)
        cls = emoji_class(char)
        if unicodedata.category(char) != "So":
            continue
        assert cls in CLASSES
        assert draft_is_trivial_ack(f"Got it {char}") is (cls in REACTIONS), (hex(code), cls)


# --- the invariant: an ack answering a question is an answer ------------------------------------

ASKING = [
    "Is the loan approved?", "Did the backup finish?", "¿Está aprobado?", "Ist das Backup fertig?", "C'est prêt ?",
    "O backup terminou?", "È pronto?", "Is het klaar?", "終わりましたか？", "好了吗？", "Готово?", "هل انتهى؟",
    "Είναι έτοιμο;", "Պատրա՞ստ է", "ተጠናቋል፧", "Is the loan approved", "Hast du es gesehen", "Est-ce que c'est prêt",
    "Será que está pronto", "It shipped, right", "Está listo, ¿verdad", "Passt das so, oder", "C'est bon, non",
    "Tá certo, né", "Avez-vous fini",
]
EVERY_ACK = sorted({phrase for phrases in ACK_CLAUSES.values() for phrase in phrases})


def _dressed(ack: str, case: str, tail: str) -> str:
    text = {"lower": ack, "title": ack[:1].upper() + ack[1:], "upper": ack.upper()}[case]
    return text + tail


@settings(max_examples=600, deadline=None)  # every phrase bare is checked exhaustively below
@given(
    st.sampled_from(EVERY_ACK),
    st.sampled_from(ASKING),
    st.sampled_from(["lower", "title", "upper"]),
    st.sampled_from(["", "!", ".", " 👍", " 🙂", "!!", " :)", " 🙏"]),
)
def test_every_ack_of_every_language_answering_a_question_fires(ack: str, question: str, case: str, tail: str) -> None:
    draft = GovernanceSubject(_dressed(ack, case, tail))
    capability = GovernanceCapability.compose()
    decision = capability.decide(draft, TurnEvidence(message=question))
    assert decision.fire
    if not capability.decide(draft, TurnEvidence(message="Thanks for the update")).fire:
        assert decision.trigger == "answers_question"  # the question is what makes it fire


def test_every_ack_pattern_answering_a_question_fires_exhaustively() -> None:
    capability = GovernanceCapability.compose()
    skipped = [ack for ack in EVERY_ACK if not capability.decide(GovernanceSubject(ack), TurnEvidence(message="Is it safe?")).fire]
    assert skipped == []


@settings(max_examples=600, deadline=None)
@given(
    st.sampled_from(CLASSES).flatmap(lambda cls: st.tuples(st.just(cls), st.sampled_from(examples(cls)))),
    st.sampled_from(["Got it", "Ok", "Noted", "Vale", "Alles klar", "D'accord", "Beleza", "Thanks", "Sure thing", ""]),
    st.sampled_from(ASKING),
    st.booleans(),
)
def test_an_ack_with_an_emoji_of_any_class_answering_a_question_fires(
    drawn: tuple[str, str], ack: str, question: str, before: bool
) -> None:
    cls, emoji = drawn
    draft = (f"{emoji} {ack}" if before else f"{ack} {emoji}").strip()
    capability = GovernanceCapability.compose()
    decision = capability.decide(GovernanceSubject(draft), TurnEvidence(message=question))
    assert decision.fire, (cls, draft)
    after_thanks = capability.decide(GovernanceSubject(draft), TurnEvidence(message="Thanks!"))
    if cls in REACTIONS:  # a reaction beside an ack: the question is what makes it fire
        assert not after_thanks.fire and decision.trigger == "answers_question", (cls, draft)
    else:  # content whatever it answers
        assert after_thanks.fire and after_thanks.trigger == "draft_claim", (cls, draft)
