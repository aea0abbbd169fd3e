"""LINE webhook use case: verify, claim each event, dispatch, reply (DESIGN §3)."""
