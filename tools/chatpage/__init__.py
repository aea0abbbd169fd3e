"""The chat page: LOCAL's LINE chats in a browser, served by ``make run`` on loopback.

``server.py`` is the page's small server (stdlib ``http.server``): it sends what a phone would send
(signed webhook bodies, built and signed by ``tools.chat`` and ``tools.line_events``), reads what
LOCAL sent back from the LINE stand-in's record, and serves ``static/`` (plain HTML, CSS and one
vanilla JS file; no build step). ``townships.json``: approximate points of Changhua's 26 townships
for the offline location picker. docs/configuration.md (the chat page) says how to use it.
"""
