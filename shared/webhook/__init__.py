"""LINE webhook use case: verify, claim each event, dispatch, reply (docs/design.md §3)."""
