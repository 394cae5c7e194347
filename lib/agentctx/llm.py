"""Calls to Claude Haiku 4.5 through the ``anthropic`` SDK, and what they cost.

The SDK honors ``ANTHROPIC_BASE_URL`` (tests point it at a fake API) and retries 429 / 529 / 5xx
itself, honoring ``retry-after``. The system prompt carries a ``cache_control`` breakpoint.
"""

from __future__ import annotations

import os

MODEL = "claude-haiku-4-5"
MAX_TOKENS = 4096
# Haiku 4.5, USD per million tokens. Cache writes cost 1.25x input, cache reads 0.1x.
PRICE_INPUT, PRICE_OUTPUT = 1.00, 5.00
PRICE_CACHE_WRITE, PRICE_CACHE_READ = 1.25 * PRICE_INPUT, 0.10 * PRICE_INPUT


class LLMError(RuntimeError):
    """The call failed (network, timeout, API error after retries); ``usage`` is what was billed."""


class Usage:
    """Token counts summed over calls, and their cost."""

    __slots__ = ("input", "output", "cache_write", "cache_read", "calls")

    def __init__(self) -> None:
        self.input = self.output = self.cache_write = self.cache_read = self.calls = 0

    def add(self, usage) -> None:
        """Add an SDK ``usage`` object (or a dict with the same fields)."""
        get = usage.get if isinstance(usage, dict) else (lambda k, d=None: getattr(usage, k, d))
        self.input += int(get("input_tokens", 0) or 0)
        self.output += int(get("output_tokens", 0) or 0)
        self.cache_write += int(get("cache_creation_input_tokens", 0) or 0)
        self.cache_read += int(get("cache_read_input_tokens", 0) or 0)
        self.calls += 1

    @property
    def input_total(self) -> int:
        """Every input token, cached or not."""
        return self.input + self.cache_write + self.cache_read

    @property
    def cost_usd(self) -> float:
        return cost_usd(self.input, self.output, self.cache_write, self.cache_read)

    def as_dict(self) -> dict:
        return {"calls": self.calls, "input_tokens": self.input, "output_tokens": self.output,
                "cache_write_tokens": self.cache_write, "cache_read_tokens": self.cache_read,
                "cost_usd": round(self.cost_usd, 6)}


def cost_usd(input_tokens: int, output_tokens: int, cache_write: int = 0, cache_read: int = 0) -> float:
    """Haiku 4.5 price of one or more calls."""
    return (input_tokens * PRICE_INPUT + output_tokens * PRICE_OUTPUT + cache_write * PRICE_CACHE_WRITE
            + cache_read * PRICE_CACHE_READ) / 1_000_000


def available(check_sdk: bool = True) -> str | None:
    """None when an API call can be made, else why not (one short phrase)."""
    if not os.environ.get("ANTHROPIC_API_KEY", "").strip():
        return "no ANTHROPIC_API_KEY"
    if not check_sdk:
        return None
    try:
        import anthropic  # noqa: F401
    except ImportError:
        return "the anthropic SDK is not installed"
    return None


class Client:
    """One SDK client; :meth:`complete` sends the cached system prompt and one user turn."""

    def __init__(self, *, timeout: float | None = None, max_retries: int | None = None):
        import anthropic

        self._anthropic = anthropic
        self.timeout = float(timeout if timeout is not None else os.environ.get("AGENTCTX_LLM_TIMEOUT", 60))
        retries = max_retries if max_retries is not None else int(os.environ.get("AGENTCTX_LLM_RETRIES", 2))
        self._client = anthropic.Anthropic(timeout=self.timeout, max_retries=retries)

    def complete(self, system: str, user: str, usage: Usage) -> str:
        """The reply's text; adds the call's usage to ``usage``. Raises LLMError on failure."""
        try:
            reply = self._client.messages.create(
                model=MODEL, max_tokens=MAX_TOKENS,
                system=[{"type": "text", "text": system, "cache_control": {"type": "ephemeral"}}],
                messages=[{"role": "user", "content": user}],
            )
        except self._anthropic.APIError as exc:
            raise LLMError(f"{type(exc).__name__}: {exc}") from None
        usage.add(reply.usage)
        if reply.stop_reason == "max_tokens":
            raise LLMError("the reply was cut off at max_tokens")
        return "".join(block.text for block in reply.content if getattr(block, "type", "") == "text")
