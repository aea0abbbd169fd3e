"""The model side of LOCAL (docs/design.md §8): one ADK ``LlmAgent`` proposes one read-only tool call per
turn; Python validates, runs, renders and audits it through the one turn engine.

``agent`` (the turn and the runner), ``prompts`` (public instruction), ``tools`` (one tool per ask
family, and their checks), ``calls`` (a call read as the router's proposal; no ADK). Only
functions/agent imports ``agent`` and ``tools``: they load google.adk and google.genai.
"""
