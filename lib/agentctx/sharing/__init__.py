"""Sharing: the files agentctx writes for people and teammates, and reads back.

CLAUDE.md drift (``drift``), the team file ``.agentctx/context.md`` (``teamsync``), whole-store export
and import (``transfer``) and the daily log (``daylog``). Imports base, ``store`` and ``capture``.
"""
