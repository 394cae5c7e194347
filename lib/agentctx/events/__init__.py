"""Events: one module per Claude Code hook event (``session_start``, ``user_prompt_submit``,
``subagent_start``, ``post_tool_use``, ``pre_compact``, ``stop``, ``session_end``, ``subagent_stop``,
``cwd_changed``), each with one ``on_<event>(HookEvent)`` handler that ``hooks/<event>.py`` runs in the
fail-open ``frame``. Handlers are thin: they call the packages below.
"""
