"""The words the detectors know, per language, folded (see `text.fold`: no accents, casefolded).

Acknowledgments are whole clauses, never single words inside a longer
sentence: a draft is an ack only when every clause of it is one of these.
That closed list is what keeps the asymmetry: a draft made of anything else
(a name, a number, a promise with a date, a language not listed) is not an
ack, and fires. "done", "sent", "listo", "erledigt", "fait", "feito" are
deliberately absent: each claims that something happened, which a critic
should check. Bare "yes"/"no" are absent too: answering a question is an
assertion; they count only before another ack clause ("yes, will do").

Built in: English, Spanish, German, French and Portuguese (as the
specification), Italian and Dutch, and a few closed phrases of Japanese,
Chinese and Russian. Every other language's ack is unrecognized and fires.
"""

from __future__ import annotations

# --- acknowledgments: every clause of the draft must be one of these ----------------

ACK_CLAUSES: dict[str, tuple[str, ...]] = {
    "en": (
        "got it", "got it thanks", "gotcha", "got you", "ok", "okay", "ok thanks", "okay thanks", "sure", "sure thing",
        "thanks", "thank you", "thanks a lot", "thanks so much", "thank you so much", "thank you very much", "many thanks",
        "thanks again", "cheers", "noted", "duly noted", "understood", "acknowledged", "will do", "will do thanks", "on it",
        "i'm on it", "im on it", "on it now", "sounds good", "sounds great", "sounds like a plan", "no problem", "no worries",
        "not a problem", "you're welcome", "youre welcome", "you are welcome", "my pleasure", "happy to help", "glad to help",
        "glad i could help", "anytime", "any time", "perfect", "great", "cool", "nice", "awesome", "excellent", "wonderful",
        "of course", "certainly", "absolutely", "definitely", "roger", "roger that", "copy that", "copy", "makes sense",
        "fair enough", "alright", "all right", "good", "very good", "good to know", "i see", "i understand", "right away",
        "i'll take care of it", "i will take care of it", "i'll handle it", "i will handle it", "i'll look into it",
        "i will look into it", "i'll get on it", "i'll do that", "i will do that", "i'll do it", "i will do it",
        "scheduling that", "scheduling that now", "looking into it", "looking into it now", "working on it",
        "thanks for letting me know", "thanks for the update", "thanks for the heads up", "thanks for the info",
        "thank you for letting me know", "thank you for the update", "appreciate it", "much appreciated", "i appreciate it",
        "hi", "hello", "hey", "hi there", "hello there", "good morning", "good afternoon", "good evening", "good night",
        "bye", "goodbye", "see you", "see you later", "take care", "have a good one", "have a nice day", "talk soon",
        "you got it", "ok will do", "okay will do", "sure will do", "understood will do", "noted thanks", "will keep that in mind",
        "i'll keep that in mind", "got it will do",
    ),
    "es": (
        "vale", "ok", "okay", "de acuerdo", "entendido", "entiendo", "lo entiendo", "comprendido", "claro", "claro que si",
        "por supuesto", "perfecto", "genial", "estupendo", "excelente", "muy bien", "bien", "gracias", "muchas gracias",
        "mil gracias", "gracias de nuevo", "te lo agradezco", "se lo agradezco", "de nada", "no hay de que", "con gusto",
        "un placer", "es un placer", "sin problema", "no hay problema", "ningun problema", "anotado", "tomo nota", "recibido",
        "lo tengo", "me encargo", "yo me encargo", "me ocupo", "yo me ocupo", "lo hago", "lo reviso", "lo miro", "enseguida",
        "ahora mismo", "cuenta conmigo", "entendido gracias", "vale gracias", "gracias por avisar", "gracias por avisarme",
        "gracias por la informacion", "gracias por el aviso", "hola", "buenos dias", "buenas tardes", "buenas noches",
        "adios", "hasta luego", "nos vemos", "cuidate", "que tengas buen dia", "a la orden", "dale", "va", "esta bien",
    ),
    "de": (
        "alles klar", "ok", "okay", "in ordnung", "verstanden", "habe verstanden", "hab verstanden", "danke", "danke schon",
        "danke sehr", "vielen dank", "herzlichen dank", "besten dank", "danke dir", "danke ihnen", "vielen dank dafur",
        "danke fur die info", "danke fur die information", "danke fur den hinweis", "danke fur die nachricht",
        "danke fur die ruckmeldung", "danke fur das update", "danke fur den tipp", "danke fur ihre geduld",
        "gut", "sehr gut", "super", "prima", "perfekt", "klasse", "toll", "wunderbar", "geht klar", "mache ich",
        "mach ich", "wird gemacht", "kein problem", "keine ursache", "gerne", "gern", "gern geschehen", "gerne doch",
        "bitte", "bitte schon", "bitte sehr", "notiert", "ist notiert", "klar", "na klar", "sicher", "selbstverstandlich",
        "naturlich", "ich kummere mich darum", "ich kummere mich drum", "ich bin dran", "bin dran", "alles gut", "passt",
        "jawohl", "einverstanden", "ich verstehe", "hallo", "guten morgen", "guten tag", "guten abend", "gute nacht",
        "tschuss", "bis spater", "bis bald", "schonen tag noch", "mach's gut", "machs gut", "verstanden danke", "ok danke",
        "alles klar danke", "wird erledigt", "ich schaue es mir an", "ich schau es mir an",
    ),
    "fr": (
        "d'accord", "daccord", "ok", "okay", "merci", "merci beaucoup", "merci bien", "merci mille fois", "mille mercis",
        "merci encore", "je vous remercie", "je te remercie", "compris", "bien compris", "c'est compris", "entendu",
        "bien entendu", "c'est note", "note", "bien note", "bien recu", "parfait", "super", "genial", "excellent",
        "tres bien", "bien", "pas de probleme", "pas de souci", "pas de soucis", "aucun probleme", "aucun souci",
        "avec plaisir", "de rien", "je vous en prie", "je t'en prie", "il n'y a pas de quoi", "je m'en occupe",
        "je m'en charge", "je regarde", "je m'y mets", "ca marche", "ca roule", "volontiers", "bien sur", "evidemment",
        "c'est parti", "je le fais", "entendu merci", "d'accord merci", "ok merci", "merci pour l'info",
        "merci pour l'information", "merci pour le retour", "merci de m'avoir prevenu", "merci de me prevenir",
        "bonjour", "bonsoir", "salut", "bonne journee", "bonne soiree", "bonne nuit", "au revoir", "a bientot", "a plus",
        "je comprends", "cela me convient", "ca me va",
    ),
    "pt": (
        "ok", "okay", "obrigado", "obrigada", "muito obrigado", "muito obrigada", "obrigadao", "valeu", "entendido",
        "entendi", "compreendido", "certo", "ta certo", "esta certo", "combinado", "beleza", "perfeito", "otimo", "excelente",
        "show", "legal", "de acordo", "claro", "claro que sim", "com certeza", "pode deixar", "deixa comigo", "sem problema",
        "sem problemas", "nao ha problema", "de nada", "por nada", "disponha", "anotado", "recebido", "ta bom", "esta bem",
        "tudo bem", "tudo certo", "vou fazer isso", "farei isso", "vou ver isso", "vou verificar", "cuido disso",
        "eu cuido disso", "ja vou", "agora mesmo", "obrigado pela informacao", "obrigada pela informacao",
        "obrigado pelo aviso", "obrigada pelo aviso", "obrigado por avisar", "obrigada por avisar", "ok obrigado",
        "ok obrigada", "entendido obrigado", "entendido obrigada", "ola", "oi", "bom dia", "boa tarde", "boa noite",
        "tchau", "ate logo", "ate mais", "ate breve", "fico feliz em ajudar", "as ordens", "e isso", "beleza obrigado",
    ),
    "it": (
        "ok", "okay", "va bene", "d'accordo", "daccordo", "capito", "ho capito", "perfetto", "ottimo", "benissimo", "bene",
        "grazie", "grazie mille", "grazie tante", "molte grazie", "ti ringrazio", "la ringrazio", "prego", "di niente",
        "figurati", "si figuri", "nessun problema", "certo", "certamente", "sicuro", "volentieri", "con piacere",
        "me ne occupo", "ci penso io", "lo faccio", "ricevuto", "preso nota", "annotato", "ciao", "buongiorno", "buonasera",
        "buonanotte", "arrivederci", "a presto", "grazie per l'informazione", "grazie per l'avviso",
    ),
    "nl": (
        "ok", "okay", "oke", "prima", "goed", "heel goed", "begrepen", "duidelijk", "helemaal duidelijk", "dank je",
        "dank je wel", "dankjewel", "dank u", "dank u wel", "bedankt", "hartelijk dank", "graag gedaan", "geen probleem",
        "komt goed", "doe ik", "ik regel het", "ik zorg ervoor", "natuurlijk", "zeker", "perfect", "top", "super", "genoteerd",
        "ontvangen", "hallo", "hoi", "goedemorgen", "goedemiddag", "goedenavond", "tot ziens", "tot straks", "tot later",
        "bedankt voor de info", "bedankt voor het bericht",
    ),
    # Closed phrases only: these scripts have no case, so nothing else in them is trusted.
    "ja": ("了解", "了解です", "了解しました", "承知しました", "かしこまりました", "わかりました", "分かりました", "ありがとう",
           "ありがとうございます", "ありがとうございました", "どういたしまして", "はい、わかりました", "よろしくお願いします"),
    "zh": ("好的", "好", "收到", "明白", "明白了", "了解", "知道了", "谢谢", "谢谢你", "非常感谢", "多谢", "不客气", "没问题", "好的谢谢"),
    "ru": ("ок", "хорошо", "понял", "поняла", "понятно", "спасибо", "спасибо большое", "большое спасибо", "принято",
           "договорились", "отлично", "конечно", "без проблем", "пожалуйста", "ладно", "привет", "до свидания"),
}


def _thanks(prefixes: tuple[str, ...], objects: tuple[str, ...]) -> tuple[str, ...]:
    return tuple(f"{p} {o}" for p in prefixes for o in objects)


# "Thanks for the update" and its kin, in each language: every thanks with every everyday object.
ACK_CLAUSES["en"] += _thanks(
    ("thanks", "thank you", "many thanks", "thanks so much", "thank you so much", "thanks a lot"),
    ("for letting me know", "for the update", "for the heads up", "for the info", "for the information", "for your help",
     "for the help", "for your patience", "for the reminder", "for the feedback", "for clarifying", "for explaining"),
)
ACK_CLAUSES["es"] += _thanks(
    ("gracias", "muchas gracias", "mil gracias"),
    ("por avisar", "por avisarme", "por la informacion", "por el aviso", "por tu ayuda", "por la ayuda", "por tu paciencia",
     "por el recordatorio", "por aclararlo", "por todo"),
)
ACK_CLAUSES["de"] += _thanks(
    ("danke", "vielen dank", "danke schon", "herzlichen dank", "besten dank"),
    ("fur die info", "fur die information", "fur den hinweis", "fur die nachricht", "fur die ruckmeldung", "fur das update",
     "fur den tipp", "fur ihre geduld", "fur deine geduld", "fur deine hilfe", "fur ihre hilfe", "fur die erinnerung",
     "fur die erklarung", "dafur"),
)
ACK_CLAUSES["fr"] += _thanks(
    ("merci", "merci beaucoup", "merci bien", "mille mercis"),
    ("pour l'info", "pour l'information", "pour le retour", "pour ton aide", "pour votre aide", "pour ta patience",
     "pour votre patience", "pour le rappel", "de m'avoir prevenu", "de me prevenir", "pour tout"),
)
ACK_CLAUSES["pt"] += _thanks(
    ("obrigado", "obrigada", "muito obrigado", "muito obrigada", "valeu"),
    ("pela informacao", "pelo aviso", "por avisar", "pela ajuda", "pela paciencia", "pelo lembrete", "pelo retorno", "por tudo"),
)

ACK_CLAUSES["en"] += (
    "i'll take a look", "i will take a look", "i'll have a look", "okay i'll take a look", "ok i'll take a look",
    "i'll keep an eye on it", "i will keep an eye on it", "sounds good to me", "works for me", "that works", "no problem at all",
    "thanks a bunch", "you're very welcome", "you're most welcome", "glad to hear it", "glad to hear that", "great to hear",
    "that's great", "thats great", "that's good to hear", "all good", "perfect thanks", "great thanks", "will check",
)
ACK_CLAUSES["es"] += (
    "gracias a ti", "gracias a usted", "muy amable", "que amable", "me parece bien", "me parece perfecto", "suena bien",
    "todo bien", "perfecto gracias", "lo vemos",
)
ACK_CLAUSES["de"] += ("das hilft", "das hilft mir", "klingt gut", "klingt super", "hort sich gut an", "das klingt gut", "gut zu wissen")
ACK_CLAUSES["fr"] += ("c'est parfait", "c'est gentil", "bonne idee", "ca me semble bien", "tres bien merci")
ACK_CLAUSES["pt"] += ("parece bom", "boa ideia", "que bom", "muito bem")

# How people acknowledge in chat and mail beyond the textbook phrases: contractions and abbreviations, diminutives,
# regional forms and slang. A phrase that says something happened or is so ("done", "listo", "erledigt", "läuft",
# "c'est fait", "feito", "fechou", "stimmt", "c'est vrai") stays out: it claims, and a critic should check it.
ACK_CLAUSES["en"] += (
    "thx", "thnx", "tnx", "ty", "tysm", "tyvm", "thank u", "thanks a ton", "thanks heaps", "thanks mate", "thanks man",
    "cheers mate", "ta", "np", "no prob", "no probs", "nw", "yw", "okie", "okey", "okie dokie", "okey dokey", "okidoki",
    "aight", "ight", "sweet", "lovely", "brilliant", "nice one", "great stuff", "amazing", "sgtm", "sounds good to me",
    "ack", "appreciated", "appreciate you", "appreciate it", "fair", "you too", "same to you", "likewise",
    "see ya", "cya", "later", "catch you later", "ttyl", "morning", "evening", "night", "hiya", "heya", "yo",
    "have a good weekend", "have a great weekend", "have a nice weekend", "have a great day", "have a good day",
)
ACK_CLAUSES["es"] += (
    "okis", "oki", "okey", "okas", "sale", "sale y vale", "orale", "andale", "andale pues", "va que va", "de una",
    "perfe", "guay", "buenisimo", "buenisima", "barbaro", "joya", "bacan", "chevere", "super", "bueno", "que bien",
    "que bueno", "muchisimas gracias", "grax", "gracias igualmente", "igualmente", "muy amable", "con mucho gusto",
    "para eso estamos", "sin problemas", "no pasa nada", "tranqui", "tranquilo", "entendi", "ya entendi", "ya veo",
    "apuntado", "recibido gracias", "clarisimo", "claro claro", "como no", "ta bien", "me encargo yo", "ahora lo veo",
    "ahora lo miro", "en eso estoy", "estoy en ello", "lo tengo en cuenta", "holi", "buenas", "buen dia", "chao", "chau",
    "un abrazo", "saludos", "un saludo", "buen finde", "buen fin de semana", "igualmente gracias", "gracias mil",
)
ACK_CLAUSES["de"] += (
    "okidoki", "oki", "klar doch", "ja klar", "klaro", "passt scho", "passt schon", "geht klar danke", "gebongt",
    "top", "spitze", "cool", "sehr schon", "dankeschon", "danke euch", "danke vielmals", "vielen lieben dank",
    "lieben dank", "tausend dank", "merci", "merci vielmals", "thx", "gleichfalls", "danke gleichfalls", "dir auch",
    "ihnen auch", "euch auch", "verstehe", "achso", "ach so", "aha", "hab's notiert", "habs notiert", "vermerkt",
    "mach ich gerne", "mach ich gern", "mache ich gerne", "kummere mich drum", "kummere mich darum", "schon dran",
    "schau ich mir an", "schaue ich mir an", "ich schau's mir an", "kein ding", "kein thema", "kein stress",
    "nichts zu danken", "hi", "hey", "moin", "moin moin", "moin zusammen", "hallo zusammen", "servus", "gruss dich",
    "tschau", "ciao", "bis dann", "schonen abend", "schonen abend noch", "schones wochenende",
    "viele grusse", "liebe grusse", "lg", "vg", "beste grusse", "gruss",
)
ACK_CLAUSES["fr"] += (
    "oki", "d'acc", "dacc", "d'ac", "dac", "ok ca marche", "c'est bon", "noté merci", "recu", "bien recu merci", "top",
    "nickel", "impec", "impeccable", "cool", "trop bien", "bien vu", "merci bcp", "mrc", "merci infiniment",
    "un grand merci", "merci a toi", "merci a vous", "pas de prob", "pas de quoi", "t'inquiete", "tkt", "carrement",
    "je regarde ca", "je gere", "ah d'accord", "je vois", "coucou", "bon week-end", "bon weekend", "a plus tard",
    "a toute", "bises", "bisous", "toi aussi", "vous aussi", "pareillement", "cordialement", "bien a vous",
    "merci de rien",
)
ACK_CLAUSES["pt"] += (
    "ta", "ta bem", "ta otimo", "certinho", "blz", "vlw", "valeu mesmo", "valeuzao", "obg", "obgd",
    "brigado", "brigada", "brigadao", "brigadinho", "obrigadinho", "obrigadinha", "mto obrigado", "grato", "grata",
    "agradeco", "imagina", "tranquilo", "tranquila", "suave", "sussa", "de boa", "tudo tranquilo", "sem stress",
    "show de bola", "top", "massa", "joia", "maravilha", "bacana", "que otimo", "percebi", "percebido",
    "anotado obrigado", "vou ver", "vou dar uma olhada", "bora", "firmeza", "tmj", "tamo junto",
    "abraco", "abracos", "abs", "bjs", "beijos", "fixe", "igualmente", "pra voce tambem", "para voce tambem",
    "voce tambem", "bom fim de semana", "falou",
)

# Yes-words: an answer on their own, an ack only beside an ack ("yes, will do", "sí, gracias", "jo, danke").
YES_WORDS: frozenset[str] = frozenset(
    {"yes", "yeah", "yep", "yup", "ya", "right", "si", "sip", "ja", "jo", "jup", "jep", "japp", "jawohl", "oui",
     "ouais", "ouaip", "sim", "uhum", "aham", "ja hoor", "да", "はい", "是的", "是"}
)
# Interjections and laughter: nothing on their own, and nothing taken from an ack beside them ("ah ok", "haha ok").
INTERJECTIONS: frozenset[str] = frozenset({"ah", "oh", "ahh", "ohh", "ahhh", "ohhh", "hm", "hmm", "ach", "ahn"})
LAUGHTER = r"(?:a?h[aei]){2,}h?|(?:j[aei]){2,}|k{3,}|(?:rs){2,}|l+o+l+|lmao|mdr|ptdr|x+d+"

# The emoji that are acks in any language are classed by Unicode range in `emoji` (its REACTIONS).

# --- claims ----------------------------------------------------------------------------

# Spelled-out numbers. Indefinite articles ("un", "una", "ein", "une", "um",
# "uma") are left out: they are the commonest words of their languages, and a
# number they might mean is caught by the ack list, which holds none.
NUMBER_WORDS: frozenset[str] = frozenset(
    """
    one two three four five six seven eight nine ten eleven twelve thirteen fourteen fifteen sixteen seventeen eighteen
    nineteen twenty thirty forty fifty sixty seventy eighty ninety hundred hundreds thousand thousands million millions
    billion billions trillion dozen dozens half twice thrice first second third fourth fifth sixth seventh eighth ninth
    tenth quarter
    uno dos tres cuatro cinco seis siete ocho nueve diez once doce trece catorce quince dieciseis diecisiete dieciocho
    diecinueve veinte veintiuno veintidos treinta cuarenta cincuenta sesenta setenta ochenta noventa cien ciento cientos
    doscientos trescientos cuatrocientos quinientos mil millon millones billon primero primera segundo segunda tercero
    tercera mitad docena
    zwei drei vier funf sechs sieben acht neun zehn elf zwolf dreizehn vierzehn funfzehn sechzehn siebzehn achtzehn
    neunzehn zwanzig dreissig vierzig funfzig sechzig siebzig achtzig neunzig hundert tausend million millionen milliarde
    milliarden erste ersten zweite zweiten dritte dritten halb halbe dutzend
    deux trois quatre cinq sept huit neuf dix onze douze treize quatorze quinze seize vingt trente quarante cinquante
    soixante cent cents mille millier milliers milliard milliards premier premiere deuxieme troisieme moitie douzaine
    dois duas tres quatro cinco seis sete oito nove dez onze doze treze catorze quinze dezesseis dezessete dezoito
    dezenove vinte trinta quarenta cinquenta sessenta setenta oitenta noventa cem cento duzentos trezentos mil milhao
    milhoes bilhao primeiro primeira terceiro terceira metade duzia
    due tre quattro cinque sei sette otto nove dieci venti trenta quaranta cinquanta cento mille milione milioni
    twee drie vier vijf zes zeven acht negen tien twintig dertig veertig vijftig honderd duizend miljoen miljard
    """.split()
)
# German and Dutch write numbers as one word: "einundzwanzig", "dreihundert", "tweeëntwintig".
NUMBER_STEMS: tuple[str, ...] = ("zwanzig", "zig", "hundert", "tausend", "ssig", "twintig", "honderd", "duizend")

MONTHS_AND_DAYS: frozenset[str] = frozenset(
    """
    january february march april june july august september october november december monday tuesday wednesday
    thursday friday saturday sunday jan feb mar apr jun jul aug sep sept oct nov dec mon tue tues wed thu thur thurs fri
    sat sun
    enero febrero marzo abril mayo junio julio agosto septiembre setiembre octubre noviembre diciembre lunes martes
    miercoles jueves viernes sabado domingo
    januar februar marz mai juni juli oktober dezember montag dienstag mittwoch donnerstag freitag samstag sonnabend sonntag
    janvier fevrier mars avril juin juillet aout septembre octobre novembre decembre lundi mardi mercredi jeudi vendredi
    samedi dimanche
    janeiro fevereiro marco maio junho julho setembro outubro novembro dezembro segunda-feira terca-feira quarta-feira
    quinta-feira sexta-feira sabado
    gennaio febbraio aprile maggio giugno luglio settembre ottobre dicembre lunedi martedi mercoledi giovedi venerdi
    maandag dinsdag woensdag donderdag vrijdag zaterdag zondag
    """.split()
)
RELATIVE_DAYS: frozenset[str] = frozenset(
    """
    today tomorrow yesterday tonight noon midnight o'clock weekend hoy manana ayer mediodia medianoche heute morgen
    gestern ubermorgen vorgestern uhr mittag mitternacht aujourd'hui demain hier midi minuit heures hoje amanha ontem
    meia-noite oggi domani ieri mezzogiorno vandaag gisteren
    """.split()
)
PERCENT_WORDS: tuple[str, ...] = ("percent", "per cent", "por ciento", "prozent", "pour cent", "pourcent", "por cento",
                                  "per cento", "procent")
MONEY_WORDS: frozenset[str] = frozenset(
    """
    dollar dollars bucks cent cents euro euros eur usd gbp jpy chf pound pounds sterling yen yuan rupee rupees peso pesos
    dolar dolares libra libras centimo centimos franc francs franken rappen reais real centavos rublo rubel ruble roubles
    """.split()
)
CITATION_WORDS: tuple[str, ...] = ("according to", "et al", "ibid", "op cit", "cf", "segun", "de acuerdo con", "laut",
                                   "gemass", "zufolge", "selon", "d'apres", "segundo", "conforme", "secondo", "volgens")

# Capitalised words that are not names: pronouns that take a capital, and the
# German nouns of everyday acknowledgments (German capitalises every noun, so
# its capitals alone say nothing; a capital word outside this list is still
# counted as a possible name: the conservative side).
NOT_NAMES: frozenset[str] = frozenset(
    """
    i i'm i'll i've i'd im ill ive id ok okay
    sie ihnen ihr ihre ihrer ihrem ihren du dich dir dein deine
    info infos information informationen nachricht nachrichten hinweis hinweise dank problem probleme ordnung frage
    fragen hilfe sache bescheid ruckmeldung update tipp tipps erklarung antwort muhe zeit moment idee vorschlag geduld
    feedback verstandnis gruss grusse tag abend morgen nacht woche wochenende
    usted ustedes vous
    """.split()
)

# --- intent of the message being answered ----------------------------------------------

# A request to do something: the reply to it may promise or claim an action.
ACTION_MARKERS: tuple[str, ...] = (
    "please", "pls", "plz", "can you", "could you", "would you", "will you", "i need you to", "i want you to", "go ahead",
    "let's", "lets", "make sure", "don't forget", "dont forget", "remind me", "por favor", "puedes", "podrias", "puede usted",
    "necesito que", "quiero que", "no olvides", "recuerdame", "bitte", "kannst du", "konntest du", "konnen sie",
    "konnten sie", "vergiss nicht", "erinnere mich", "s'il te plait", "s'il vous plait", "stp", "svp", "peux-tu",
    "peux tu", "pourrais-tu", "pourrais tu", "pouvez-vous", "pouvez vous", "pourriez-vous", "n'oublie pas",
    "rappelle-moi", "pode", "podes", "poderia", "voce pode", "preciso que", "quero que", "nao esqueca", "me lembra",
    "lembre-me", "per favore", "puoi", "potresti", "ricordami", "alsjeblieft", "kun je", "kunt u", "zou je",
)
ACTION_VERBS: frozenset[str] = frozenset(
    """
    schedule reschedule send resend book cancel delete remove create add update change set move pay transfer buy order
    deploy restart reboot run start stop email mail call remind reply forward post publish write draft fix merge push
    install uninstall upload download share invite approve reject close open reset rename archive assign submit sign
    renew refund charge rollback revert shutdown enable disable configure block ban kick mute unmute wire withdraw
    deposit sell purchase subscribe unsubscribe notify ping message text tell announce release ship migrate drop
    programa reprograma agenda envia envie manda mande reserva cancela borra elimina crea anade agrega actualiza cambia
    mueve paga transfiere compra pide despliega reinicia ejecuta llama escribe responde publica comparte invita aprueba
    rechaza cierra abre asigna
    schick schicke sende buche storniere losche losch entferne erstelle fuge aktualisiere andere verschiebe bezahle
    uberweise kaufe bestelle starte stoppe rufe schreibe antworte veroffentliche teile lade genehmige schliesse offne
    plane
    envoie envoyez planifie reserve reservez annule annulez supprime supprimez cree creez ajoute ajoutez mets mettez
    deplace paie paye payez transfere achete commande deploie redemarre lance appelle ecris reponds publie partage
    invite approuve ferme ouvre
    envia agende cancele apague apaga exclua crie cria adicione adiciona atualize atualiza mude muda pague paga
    transfira compre peca implante reinicie execute ligue escreva responda publique compartilhe convide aprove feche
    manda invia prenota annulla cancella elimina crea aggiungi aggiorna cambia sposta paga compra ordina
    stuur boek annuleer verwijder maak voeg betaal koop bestel start stop bel schrijf
    """.split()
)
# Question words: a message that opens with one asks ("what", "cuándo", "warum", "pourquoi", "onde", "что", "هل").
QUESTION_STARTS: frozenset[str] = frozenset(
    """
    what when where who whom whose why how which any anyone anybody anything
    que cuando donde quien quienes cual cuales como cuanto cuanta cuantos cuantas acaso
    was wann wo wer wem wen warum wieso weshalb wie welche welcher welches
    quoi quand ou qui pourquoi comment quel quelle quels quelles est-ce combien
    quando onde quem porque qual quais quanto quanta sera
    cosa chi perche quale dove come quanti
    wat wanneer waar wie waarom hoe welke
    что когда где кто почему зачем как какой какая какие сколько куда откуда можно разве неужели
    هل ماذا متى أين اين من لماذا كيف كم
    """.split()
)
# A verb first, then its subject: a question in English, German and Dutch ("Is the loan approved", "Hast du es",
# "Läuft der Server"). Without the subject it is no question: "Have a great weekend", "Passt, danke", "Ist notiert".
QUESTION_VERBS: frozenset[str] = frozenset(
    """
    is are am was were do does did can could should would will have has may might shall must isn't aren't wasn't
    weren't don't doesn't didn't can't couldn't shouldn't wouldn't won't haven't hasn't
    ist sind hast hat habt gibt kann kannst konnen darf darfst durfen soll sollen sollte solltest muss musst mussen
    wird wirst werden bist seid war warst waren habe haben hattest hatten weisst wisst wissen lauft laufen kommt
    kommst geht gehst klappt funktioniert passt brauchst braucht willst wollt wollen magst machst macht siehst sieht
    heb heeft hebben ben bent kun kunt mag moet zal wil
    """.split()
)
QUESTION_SUBJECTS: frozenset[str] = frozenset(
    """
    i you we they he she it the this that these those my your our their his her its there anyone anybody someone
    everyone everything all
    du ihr sie er es wir man der die das den dem ein eine einer mein meine dein deine unser unsere euer eure jemand
    alles
    je jij u wij ze zij hij het de dit dat
    """.split()
)
# Determiners: a word after one is a noun, not a request ("the fix", "my email", "den Fix", "le rapport").
DETERMINERS: frozenset[str] = frozenset(
    """
    the a an my your our their his her its this that these those
    el la los las un una mi tu su mis tus sus este esta ese esa
    der die das den dem des ein eine einen einem einer mein meine meinen dein deine unser unsere
    le les une mon ton son ma ta sa mes tes ses du des ce cette l'
    o os as um uma meu minha teu tua seu sua do da dos das no na
    """.split()
)
# A question without its mark, anywhere in the message: "est-ce que", "será que", "por acaso", "ли".
QUESTION_PHRASES: tuple[str, ...] = ("est-ce que", "est ce que", "n'est-ce pas", "sera que", "por acaso", "ли")
# A question without its mark, by how the message opens: "do you know if", "es cierto que", "weißt du, ob".
QUESTION_OPENINGS: tuple[str, ...] = (
    "do you know", "any idea", "any news", "any update", "anyone know", "es cierto que", "es verdad que", "sabes si",
    "sabe si", "alguien sabe", "hay novedades", "weisst du", "wissen sie", "gibt es", "o que", "voce sabe", "sabe se",
    "tem novidade", "tu sais", "vous savez", "il y a du nouveau",
)
# A question asked by its tail, after a comma: "…, right", "…, ¿verdad", "…, oder", "…, n'est-ce pas", "…, né".
QUESTION_TAGS: tuple[str, ...] = (
    "right", "correct", "yes or no", "isn't it", "aren't they", "innit", "eh", "no", "verdad", "cierto", "oder", "ne",
    "gell", "nicht wahr", "stimmt's", "richtig", "non", "hein", "pas vrai", "c'est ca", "nao e", "certo", "vero", "toch",
)
# Chinese, Japanese and Korean end a question with a particle, often without the mark; Chinese also asks "A不A".
CASELESS_QUESTION = (
    r"(?:[吗嗎么麼呢][\s。.!！~]*$|(\w)[不没]\1|什么|什麼|为什么|為什麼|怎么|怎麼|哪|谁|誰|多少|有没有"
    r"|(?:ます|です|でしょう|ません|ました)か[\s。.!！]*$|か[\s。.!！]*$|何|誰|どこ|いつ|なぜ|どうして|どうやって|いくら"
    r"|(?:까|까요|나요|니|냐)[\s.!~]*$|(?:^|\s)(?:뭐|언제|어디|누가|왜|어떻게|얼마))"
)

# Words common enough in each language that a message holding one is in a language the detectors know.
FUNCTION_WORDS: dict[str, frozenset[str]] = {
    "en": frozenset(
        """the a an and or but is are was were be been have has had will would can not so just all at as by from up out
        about i i'm i'll i've i'd you you're it it's that that's he she we they to of in on for with this my your our
        their me him her us them there here what""".split()
    ),
    "es": frozenset(
        """el la los las un una y o pero es son fue yo tu usted ella nosotros de del en por para con este esta mi te me se
        lo le que cuando como muy mas ya no al su sus hay estoy""".split()
    ),
    "de": frozenset(
        """der die das den dem ein eine und oder aber ist sind war ich du er sie es wir ihr zu von in auf fur mit nicht
        bin habe hast hat wird werde noch schon auch nur wenn dass mich mir dich dir uns""".split()
    ),
    "fr": frozenset(
        """le la les un une et ou mais est sont etait je j'ai tu il elle nous vous de du des en pour avec ce c'est mon
        ne pas que qui te me se tres plus au aux sur""".split()
    ),
    "pt": frozenset(
        """o a os as um uma e ou mas sao foi eu voce ele ela nos de do da em para com este esta meu que nao me te se
        muito mais ja quando no na""".split()
    ),
    "it": frozenset("il lo la gli le un una e o ma sono io tu lui lei noi di del della in per con questo mio che non".split()),
    "nl": frozenset("de het een en of maar is zijn was ik jij je hij zij we van in op voor met dit dat mijn niet".split()),
}
