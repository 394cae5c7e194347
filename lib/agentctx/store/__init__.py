"""The store layer: every SQL statement on the store's tables (records, records_fts, records_archive,
sessions, injections, nodes, edges, record_entities, meta) is in this package, and nowhere else
(``tests/test_architecture.py`` checks it).

The rules live in ``records``: one definition of a current record, project scoping of every read and
write by id (``all_projects=True`` to reach every project), and the write policies (``upsert_by_key``,
``retire``, ``reinforce``, ``touch``). ``sessions`` owns session rows (``ensure``) and injection
accounting; ``graph`` nodes, edges and record links; ``db`` the connection, transactions and ``meta``.
"""
