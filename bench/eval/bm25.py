"""Plain Okapi BM25 (k1 1.2, b 0.75) over lowercase alphanumeric tokens with a 45-word stop list:
the floor every agentctx path is compared with. No product code."""

from __future__ import annotations

import math
import re
from collections import Counter

K1, B = 1.2, 0.75
STOP = frozenset(
    """a an and are as at be but by for from has have he her his i in is it its me my of on or our she
    so that the their them they this to was we were what when where which who will with you your""".split()
)

_TOKEN = re.compile(r"[a-z0-9]+")


def tokens(text: str) -> list[str]:
    return [t for t in _TOKEN.findall(text.lower()) if t not in STOP]


class Index:
    """An in-memory BM25 index over (key, text) documents."""

    def __init__(self, docs: list[tuple[str, str]]):
        self.keys = [k for k, _ in docs]
        self.tf = [Counter(tokens(t)) for _, t in docs]
        self.len = [sum(c.values()) for c in self.tf]
        self.avg = sum(self.len) / max(1, len(self.len))
        df: Counter = Counter()
        for c in self.tf:
            df.update(c.keys())
        n = len(docs)
        self.idf = {t: math.log(1 + (n - d + 0.5) / (d + 0.5)) for t, d in df.items()}

    def search(self, query: str, k: int = 10) -> list[str]:
        q = [t for t in dict.fromkeys(tokens(query)) if t in self.idf]
        scores = []
        for i, tf in enumerate(self.tf):
            s = 0.0
            norm = K1 * (1 - B + B * self.len[i] / self.avg)
            for t in q:
                f = tf.get(t)
                if f:
                    s += self.idf[t] * f * (K1 + 1) / (f + norm)
            if s > 0:
                scores.append((s, i))
        scores.sort(key=lambda x: (-x[0], x[1]))
        return [self.keys[i] for _, i in scores[:k]]
