"""The offline router's vocabulary, as data: the words it reads, by ask family (events, places, limits,
small talk) and the date and holiday words (shared.turn.vocabulary.dates)."""
