"""Capture: what a session says and does, turned into records.

The transcript reader (``transcript``), PostToolUse observations (``observe``), explicit statements
(``explicit``), model extraction (``extract``, ``prompts``, ``schema``), entity links (``entities``), the
project profile (``stack``), the developer's global preferences (``devprofile``), what a session did
(``activity``) and where it stands (``handover``: the handover, the anchor and the derived handover).
Imports only the base modules and ``store``.
"""
