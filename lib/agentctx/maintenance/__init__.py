"""Maintenance: operations a person runs on the store: ``doctor`` (check, repair, salvage),
``forgetting`` (forget and purge everywhere) and ``rescan`` (redact what is already stored).
Imports base, ``store``, ``capture`` and ``sharing``.
"""
