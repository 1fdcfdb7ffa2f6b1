"""The reply judge of judge rules: a batch's wait for a verdict, the seam, the request, the call and its events.

- `rules`: one gate's judge rules from a due batch to a verdict (their slots, the calls to start, what a verdict delivers).
- `slot`: a judge rule's batches from the moment they fire to a verdict (pure state, kept by rule name).
- `port`: the seam between the gate and the judge (`Judge`, `JudgeRequest`, `JudgeOutcome`).
- `prompt`: the judge's request as plain text, and how its answer is read.
- `call`: `ReplyJudge`, the one model call of role `judge`.
- `verdicts`: the `judge_verdict` event each verdict writes.
"""
