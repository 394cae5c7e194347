"""A scripted multi-session history of a fictional project ("tidepool", a tide-pool species
logging app) and questions whose right records are known.

Each event is one session's worth of records, oldest first. ``supersede`` names the earlier
record a decision replaces (its successor is the right answer; the old one is a stale hit).
Questions are phrased as a developer would ask them, mostly NOT with the records' words.
"""

# (name, session date, type, title, body, supersedes)
EVENTS = [
    # session 1: the start
    ("db1", "2026-01-05", "decision", "Store observations in SQLite on the device",
     "Offline-first: each phone keeps its own SQLite file; sync comes later.", None),
    ("api1", "2026-01-05", "decision", "Backend exposes a REST API with JSON bodies",
     "Flask app, endpoints under /api/v1.", None),
    ("conv_fmt", "2026-01-05", "convention", "Format Python with black, line length 100", "", None),
    ("conv_tests", "2026-01-05", "convention", "Tests live next to the code as test_*.py and run with pytest", "", None),
    ("noise1", "2026-01-05", "discovery", "The office wifi drops every afternoon", "Unrelated to the app.", None),
    # session 2
    ("auth1", "2026-01-19", "decision", "Users sign in with email magic links",
     "No passwords: a one-time link is mailed, valid 15 minutes.", None),
    ("gotcha_tz", "2026-01-19", "bugfix", "Sighting timestamps were stored in local time and shifted after DST",
     "Always store UTC; convert to the observer's zone only when rendering.", None),
    ("noise2", "2026-01-19", "discovery", "Renamed the staging bucket to tidepool-stage", "", None),
    ("pref_commits", "2026-01-19", "preference", "Keep commits small, one concern each", "", None),
    # session 3: the first reversal
    ("db2", "2026-02-10", "decision", "Move observations to PostgreSQL on the server",
     "SQLite on the device stays only as an offline cache; PostgreSQL is the source of truth.", "db1"),
    ("gotcha_img", "2026-02-10", "bugfix", "Photo uploads over 10 MB timed out behind nginx",
     "Raised client_max_body_size to 25m and made uploads resumable.", None),
    ("conv_migr", "2026-02-10", "convention", "Schema changes go through Alembic migrations, never by hand", "", None),
    ("noise3", "2026-02-10", "discovery", "Looked at three charting libraries, none chosen yet", "", None),
    # session 4
    ("api2", "2026-03-02", "decision", "Switch the backend API to GraphQL",
     "Strawberry on FastAPI; the mobile app asks for exactly the fields a screen needs.", "api1"),
    ("conv_fmt2", "2026-03-02", "convention", "Format and lint Python with ruff instead of black",
     "ruff format, line length 100; black removed from the dev dependencies.", "conv_fmt"),
    ("gotcha_geo", "2026-03-02", "discovery", "GPS fixes near cliffs are often 200 m off",
     "Snap a sighting to the nearest mapped pool when accuracy is worse than 50 m.", None),
    ("noise4", "2026-03-02", "discovery", "The CI runner image was updated to Ubuntu 24.04", "", None),
    # session 5: another reversal and an auth change
    ("auth2", "2026-03-20", "decision", "Sign-in moves to passkeys (WebAuthn), magic links only as fallback",
     "Passkeys on iOS and Android; the emailed link remains for devices without them.", "auth1"),
    ("gotcha_sync", "2026-03-20", "bugfix", "Two phones editing the same sighting offline lost one edit on sync",
     "Sync now merges field by field with last-writer-wins per field and keeps a conflict log.", None),
    ("conv_branch", "2026-03-20", "convention", "Branch names are feature/<ticket>-<slug>", "", None),
    ("noise5", "2026-03-20", "discovery", "Coffee machine on floor 2 fixed", "", None),
    # session 6
    ("db3", "2026-04-15", "decision", "Add PostGIS to the PostgreSQL server for pool geometry queries",
     "Pools are polygons; nearest-pool lookups use a GiST index.", None),
    ("species1", "2026-04-15", "decision", "Species names follow the WoRMS taxonomy identifiers",
     "Each species row stores its AphiaID; common names are per-locale labels.", None),
    ("gotcha_ios", "2026-04-15", "bugfix", "The iOS camera screen crashed when permission was denied",
     "Check AVCaptureDevice authorization before presenting the capture view.", None),
    ("noise6", "2026-04-15", "discovery", "Meeting notes moved to the shared drive", "", None),
    # session 7: deployment decision changes
    ("deploy1", "2026-05-04", "decision", "Deploy the backend on a single VM with docker compose", "", None),
    ("deploy2", "2026-06-01", "decision", "Deploy the backend to Fly.io machines in two regions",
     "The VM is retired; blue-green deploys through fly deploy.", "deploy1"),
    ("gotcha_cache", "2026-06-01", "discovery", "Tile images are cached by the CDN for a day; bust with ?v=",
     "", None),
    ("noise7", "2026-06-01", "discovery", "Dependabot opened 14 pull requests this week", "", None),
]

# (question, names of the right records)
QUESTIONS = [
    ("where is the source of truth for sightings kept?", ["db2"]),
    ("what database do we use", ["db2"]),
    ("how do clients talk to the server", ["api2"]),
    ("is the API REST or something else?", ["api2"]),
    ("which formatter should I run on the python code", ["conv_fmt2"]),
    ("how do people log in to the app", ["auth2"]),
    ("password reset flow for users", ["auth2"]),
    ("times are off by one hour after the clocks changed", ["gotcha_tz"]),
    ("large pictures fail to upload", ["gotcha_img"]),
    ("how do I change the database tables", ["conv_migr"]),
    ("where do unit tests go", ["conv_tests"]),
    ("location is wrong near the rocks", ["gotcha_geo"]),
    ("edits disappear when two devices sync", ["gotcha_sync"]),
    ("what should I call my git branch", ["conv_branch"]),
    ("spatial queries for nearest pool", ["db3"]),
    ("how are species identified", ["species1"]),
    ("app crashes when the user refuses camera access", ["gotcha_ios"]),
    ("where does the backend run in production", ["deploy2"]),
    ("how do we ship a new release of the server", ["deploy2"]),
    ("map tiles show old images", ["gotcha_cache"]),
    ("how big should a commit be", ["pref_commits"]),
    ("do we support offline use on the phone", ["db2"]),
]
