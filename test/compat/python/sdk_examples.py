"""The two examples of the earlier API's Python SDK (everruns/sdk python/, 0.2.1) that this
service's API covers, basic.py and initial_files.py, replayed as that SDK sends and reads them.

The SDK itself is on no package index this project can install from, so this file restates its
wire contract with the SDK's own dependencies (httpx, httpx-sse, pydantic 2): request models
that serialise like its `model_dump(exclude_none=True)` (list fields default to `[]`, so
`initial_files: []` is always sent), the raw key as `Authorization`, JSON content type on every
call, and response models with the fields its models require (an agent's `harness_id` among
them). A response the SDK could not parse fails here too. Usage: EVERRUNS_API_URL=<base>
EVERRUNS_API_KEY=<key> python sdk_examples.py; prints one line per step.
"""

from __future__ import annotations

import asyncio
import json
import os
from typing import Any, Literal, Optional

import httpx
from httpx_sse import aconnect_sse
from pydantic import BaseModel, Field


class CapabilityConfig(BaseModel):
    config: Optional[Any] = None
    ref: str


class InitialFile(BaseModel):
    content: str
    encoding: Optional[str] = None
    is_readonly: Optional[bool] = None
    path: str


class CreateAgentRequest(BaseModel):
    capabilities: Optional[list[CapabilityConfig]] = Field(default_factory=list)
    harness_id: Optional[str] = None
    initial_files: Optional[list[InitialFile]] = Field(default_factory=list)
    name: str
    system_prompt: str
    tags: Optional[list[str]] = Field(default_factory=list)
    tools: Optional[list[dict[str, Any]]] = Field(default_factory=list)


class CreateSessionRequest(BaseModel):
    agent_id: Optional[str] = None
    capabilities: Optional[list[CapabilityConfig]] = Field(default_factory=list)
    initial_files: Optional[list[InitialFile]] = Field(default_factory=list)
    tags: Optional[list[str]] = Field(default_factory=list)
    title: Optional[str] = None
    tools: Optional[list[dict[str, Any]]] = Field(default_factory=list)


class Agent(BaseModel):
    capabilities: Optional[list[CapabilityConfig]] = Field(default_factory=list)
    created_at: str
    harness_id: str
    id: str
    name: str
    status: Literal["active", "archived", "deleted"]
    system_prompt: str
    updated_at: str


class Session(BaseModel):
    agent_id: Optional[str] = None
    created_at: str
    harness_id: str
    id: str
    organization_id: str
    status: str


class Message(BaseModel):
    content: list[dict[str, Any]]
    created_at: str
    id: str
    role: Literal["system", "user", "agent", "tool_result"]


class Event(BaseModel):
    data: Any
    id: str
    session_id: str
    ts: str
    type: str


class Sdk:
    def __init__(self) -> None:
        base = os.environ["EVERRUNS_API_URL"].rstrip("/") + "/"
        self.key = os.environ["EVERRUNS_API_KEY"]
        headers = {"Authorization": self.key, "Content-Type": "application/json"}
        self.http = httpx.AsyncClient(base_url=base, headers=headers, timeout=30.0)

    async def call(self, method: str, path: str, body: Optional[BaseModel | dict] = None) -> Any:
        data = body.model_dump(exclude_none=True) if isinstance(body, BaseModel) else body
        resp = await self.http.request(method, f"v1/{path.lstrip('/')}", json=data)
        if not resp.is_success:
            raise SystemExit(f"{method} {path} -> {resp.status_code} {resp.text}")
        return resp.json() if resp.content else None

    async def events(self, session_id: str, wait: float):
        """The SDK's `events.stream`: the SSE route, Accept text/event-stream, JSON data per event."""
        url = f"v1/sessions/{session_id}/sse"
        async with aconnect_sse(self.http, "GET", url, headers={"Accept": "text/event-stream"}) as source:
            stream = source.aiter_sse()
            while True:
                sse = await asyncio.wait_for(stream.__anext__(), timeout=wait)
                if sse.event in ("connected", "disconnecting"):
                    continue
                yield Event(**json.loads(sse.data))


async def basic(sdk: Sdk) -> None:
    caps = [CapabilityConfig(ref="current_time")]
    req = CreateAgentRequest(name="example-assistant-py", system_prompt="You are a helpful assistant.", capabilities=caps)
    agent = Agent(**await sdk.call("POST", "/agents", req))
    print(f"basic: agent {agent.id} harness {agent.harness_id} status {agent.status}")
    session = Session(**await sdk.call("POST", "/sessions", CreateSessionRequest(agent_id=agent.id, capabilities=caps)))
    print(f"basic: session {session.id} harness {session.harness_id}")
    text = "What time is it right now?"
    body = {"message": {"role": "user", "content": [{"type": "text", "text": text}]}}
    message = Message(**await sdk.call("POST", f"/sessions/{session.id}/messages", body))
    print(f"basic: message {message.id}")
    async for event in sdk.events(session.id, wait=45):
        if event.type in ("output.message.completed", "turn.completed", "turn.failed"):
            print(f"basic: event {event.type}")
            break
    await sdk.call("DELETE", f"/sessions/{session.id}")
    await sdk.call("DELETE", f"/agents/{agent.id}")


async def initial_files(sdk: Sdk) -> None:
    agent = Agent(**await sdk.call("POST", "/agents", CreateAgentRequest(name="initial-files-example-py", system_prompt="Read the files.")))
    files = [
        InitialFile(path="/workspace/README.md", content="# Demo Project\n", encoding="text", is_readonly=True),
        InitialFile(path="/workspace/src/app.py", content='def greet(name):\n    return f"hello, {name}"\n', encoding="text"),
    ]
    req = CreateSessionRequest(agent_id=agent.id, title="Session with starter files", initial_files=files)
    session = Session(**await sdk.call("POST", "/sessions", req))
    print(f"initial_files: session {session.id}")
    for path in ("/workspace/README.md", "/workspace/src/app.py"):
        stat = await sdk.call("POST", f"/sessions/{session.id}/fs/_/stat", {"path": path})
        print(f"initial_files: {stat['path']} {stat['size_bytes']} bytes readonly={stat['is_readonly']}")
    body = {"message": {"role": "user", "content": [{"type": "text", "text": "Summarize the project."}]}}
    message = Message(**await sdk.call("POST", f"/sessions/{session.id}/messages", body))
    print(f"initial_files: message {message.id}")
    await sdk.call("DELETE", f"/sessions/{session.id}")
    await sdk.call("DELETE", f"/agents/{agent.id}")


async def main() -> None:
    sdk = Sdk()
    try:
        await basic(sdk)
        await initial_files(sdk)
    finally:
        await sdk.http.aclose()


if __name__ == "__main__":
    asyncio.run(main())
