"""Notifications: after a cycle, what an operator should hear about now.

`rules` maps the events a cycle wrote (and the thoughts it admitted) to
candidates (`evaluate`, reads only); `table` stores them as notifications,
counts repeats within the mind's cooldown, and acknowledges them (`notify`,
`daemon_notice`, `ack`: writer jobs, each change with its event).

After a cycle completes, in one writer job:

    notify(db, mind=mind, cycle_id=cycle_id, now=now,
           candidates=evaluate(db, mind=mind, settings=settings,
                               events=[*result.perception.events, *result.effects],
                               winners=result.winners))

and after a turn's tool call is denied, in the writer job that records it,
with `events=[the action_denied event]` and no winners.
"""
