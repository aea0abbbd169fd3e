"""The staff side (docs/design.md §10): a LINE group of staff takes and closes residents' requests.

Modules: ``access`` (who may act: ``LOCAL_STAFF_GROUP_ID``, ``LOCAL_STAFF_USER_IDS``), ``cards``
(Flex cards, signed postbacks), ``transitions`` (one transaction per staff action), ``records``
(the staff outbox and audit), ``relay`` (pushes by the queue), ``sweep`` (reminders, follow-ups),
``flow`` (the webhook's staff events), ``service`` (the queue's staff tasks), ``report``
(``make requests``). Nothing is imported here, so the handoff create can use ``records`` alone.
"""
