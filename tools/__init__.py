"""Developer and operator tools: LINE stand-in, terminal chat, dev server, demo, user data, bench."""
