"""One mind turn: the respond context, the cycle, the draft, the emitted reply and the narrative.

`run.run_turn` is the algorithm; `context.respond_context` builds what the
mind's respond call would send, with no side effects.
"""
