"""``python -m tools.chatpage``: the chat page's server (tools/chatpage/server.py)."""
import sys

from tools.chatpage.server import main

sys.exit(main())
