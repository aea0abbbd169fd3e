"""The model side of LOCAL (DESIGN §8): one ADK ``LlmAgent`` proposes one read-only tool call per
turn; Python validates, runs, renders and audits it through the one turn engine.

``agent`` (the turn and the runner), ``prompts`` (public instruction), ``tools`` (the four tools and
their checks). Only functions/agent imports these modules: they load google.adk and google.genai.
"""
