"""The narrative: what a mind would say it is doing, and why, after each cycle.

A five-part structure built from state, deterministically (the same state and
the same workspace give the same narrative):

| part      | from                                                                                  |
|-----------|---------------------------------------------------------------------------------------|
| doing     | the cycle's admitted thoughts (the winners), in their order                           |
| why       | the mind's newest stimuli ("alice said …")                                             |
| recently  | notable events among the mind's last `WINDOW` events: replies, belief status changes, |
|           | metacognition warnings, completed or abandoned goals, resolved predictions, notifications |
| resolving | contested beliefs, then active goals                                                  |
| next      | open predictions, soonest due first, with their due times                             |

Each part holds at most `MAX_ITEMS` short strings of at most `MAX_ITEM`
characters. `render` turns it into short first-person prose; empty parts are
left out. The prose is what the mind would tell a colleague: no ids, labels
or bare figures (how sure is said in words; the citations carry the rest), no
text cut outside a quote, each thing told once with the verb for what
happened, and repeats folded (see "building" below).

Storing. `update` (a writer job, run right after `cycle_completed`) writes a
`narrative_updated` event only when the five parts differ from the mind's
previous narrative: actor `process:narrative`, text the plain prose, caused
by the cycle's `cycle_completed`, citing what it mentions (stimuli and
notable events, contested beliefs, goals' `goal_created`, predictions'
beliefs and `prediction_made`, the winners' refs), data the five parts,
`rendered_by: "plain"` and the previous narrative's id.

Rephrasing. With `narrative_llm: true` in the mind's settings, the caller then
awaits `apply_rephrase`: the `narrate` role is asked to rephrase the plain
prose without adding content, and the outcome is a `narrative_rephrased`
event caused by the `narrative_updated` one:

* accepted: actor `model:narrate`, text the model's prose,
  `rendered_by: "model"`, citing the model call;
* refused: actor `process:narrative`, text the plain prose,
  `rendered_by: "plain"`, `reason` (no_model, budget, held, refused,
  model_error, truncated, empty_answer, unsupported_content) and `detail`,
  citing the model call when one was recorded (a refused or failed call is
  in the ledger too).

Events are immutable, so the `narrative_updated` event always holds the plain
rendering and the rephrasing is a second event; `latest` joins them.

The "adds no content" rule (`unsupported`) is the wording guard's
(`noemad.cognition.wording`, PROSE vocabulary): the source is the plain prose,
the five parts and the mind's name.

Its modules: `model` (the parts and their limits), `phrasing` (each thing
said as a clause), `build`, `render`, `stored` (`update`, `latest`,
`narrative_shown`) and `rephrase` (`apply_rephrase`, `unsupported`).
"""
