"""The staff side (docs/design.md §10): a LINE group of staff takes and closes residents' requests.

Modules: ``access`` (who may act: ``LOCAL_STAFF_GROUP_ID``, ``LOCAL_STAFF_USER_IDS``), ``cards``
(Flex cards, signed postbacks), ``transitions`` (one transaction per staff action), ``audit``
(staff members in stored history, the audit record), ``relay`` (pushes by the queue),
``reminders`` (due reminders and follow-up notices), ``flow`` (the webhook's staff events),
``service`` (the queue's staff tasks), ``report`` (``make requests``). The staff outbox itself is
``shared.handoff.staff_outbox``: staff imports handoff, never the reverse.
"""
