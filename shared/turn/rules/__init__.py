"""The offline router's rules, one module per ask family; shared.turn.router orders them in one table."""
