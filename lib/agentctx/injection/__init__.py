"""Injection: what reaches a session, under the hard budgets of ``budgets``: the SessionStart digest
(``digest``), the records selected for a prompt (``turn``) and a subagent's brief (``briefs``).
The hook handlers that inject them are in ``events``.
"""
