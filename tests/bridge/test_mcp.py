"""``dynmem mcp`` spoken to by the official MCP client over stdio, as an agent would."""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path
from typing import Any

import anyio
import pytest
from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client
from mcp.types import CallToolResult, TextContent

pytestmark = [pytest.mark.slow, pytest.mark.timeout(180)]

TOOLS = {"memory_search", "memory_remember", "memory_forget", "memory_why", "memory_list"}


def _params(data_dir: Path, project: str) -> StdioServerParameters:
    env = {k: v for k, v in os.environ.items() if k not in ("DYNMEM_HOME", "RAY_ADDRESS")}
    return StdioServerParameters(command=sys.executable, args=["-m", "bridge.cli", "mcp", "--project", project,
                                                               "--data-dir", str(data_dir)], env=env)


def _structured(res: CallToolResult) -> dict[str, Any]:
    assert not res.isError, res.content
    assert res.structuredContent is not None
    text = res.content[0]
    assert isinstance(text, TextContent) and json.loads(text.text) == res.structuredContent  # both forms agree
    return res.structuredContent


def _error(res: CallToolResult) -> str:
    assert res.isError
    text = res.content[0]
    assert isinstance(text, TextContent)
    return text.text


async def _session_run(data_dir: Path) -> dict[str, Any]:
    out: dict[str, Any] = {}
    with open(os.devnull, "w") as errlog:
        async with stdio_client(_params(data_dir, "shop-api"), errlog=errlog) as (read, write):
            async with ClientSession(read, write) as session:
                init = await session.initialize()
                out["server"] = init.serverInfo.name
                listed = await session.list_tools()
                out["tools"] = {t.name: t for t in listed.tools}

                rem = _structured(await session.call_tool("memory_remember", {"text": "The API server listens on port 7070."}))
                out["remember"] = rem
                rem2 = _structured(await session.call_tool("memory_remember", {"text": "Releases are cut on Tuesdays."}))
                out["search"] = _structured(await session.call_tool("memory_search", {"query": "which port does the API server use?"}))
                out["list"] = _structured(await session.call_tool("memory_list", {"state": "active"}))
                mid = rem["memory_ids"][0]
                out["why"] = _structured(await session.call_tool("memory_why", {"memory_id": mid}))
                out["forget"] = _structured(await session.call_tool("memory_forget", {"memory_id": mid}))
                out["search_after"] = _structured(await session.call_tool("memory_search", {"query": "which port does the API server use?"}))
                out["tuesday"] = _structured(await session.call_tool("memory_search", {"query": "when are releases cut?"}))
                out["kept_id"] = rem2["memory_ids"][0]
                out["why_unknown"] = _error(await session.call_tool("memory_why", {"memory_id": "m_doesnotexist"}))
                out["bad_args"] = await session.call_tool("memory_search", {"query": ""})
                out["other_project"] = _structured(await session.call_tool(
                    "memory_remember", {"text": "The worker listens on port 6060.", "project": "other"}))
                out["other_search"] = _structured(await session.call_tool(
                    "memory_search", {"query": "which port does the worker listen on?"}))
    return out


def test_an_mcp_client_lists_the_tools_and_gets_an_injected_block(tmp_path: Path) -> None:
    out = anyio.run(_session_run, tmp_path / "data")

    assert out["server"] == "dynamics-memory"
    assert set(out["tools"]) == TOOLS
    assert out["tools"]["memory_search"].inputSchema["required"] == ["query"]
    assert out["tools"]["memory_search"].outputSchema is not None  # typed structured output

    assert out["remember"]["outcomes"] == {"created": 1}
    block = out["search"]["context"]
    assert block.startswith("<dynmem-memory>") and block.rstrip().endswith("</dynmem-memory>")
    assert "port 7070" in block and not out["search"]["abstained"]
    assert out["search"]["memories"][0]["id"] == out["remember"]["memory_ids"][0]
    assert {m["text"] for m in out["list"]["memories"]} == {"The API server listens on port 7070.",
                                                            "Releases are cut on Tuesdays."}
    why = out["why"]
    assert why["memory"]["text"] == "The API server listens on port 7070."
    assert why["score_terms"] is not None and why["history"], why

    # Forgotten: gone from search, while the other memory still answers (positive control).
    assert out["forget"]["retired"] == [out["remember"]["memory_ids"][0]]
    assert "7070" not in out["search_after"]["context"]
    assert "Tuesdays" in out["tuesday"]["context"] and out["tuesday"]["memories"][0]["id"] == out["kept_id"]

    assert "not_found: no memory 'm_doesnotexist'" in out["why_unknown"], out["why_unknown"]
    assert out["bad_args"].isError  # an empty query does not validate

    # A memory of another project never answers in this one.
    assert out["other_project"]["memory_ids"]
    assert "6060" not in out["other_search"]["context"]
