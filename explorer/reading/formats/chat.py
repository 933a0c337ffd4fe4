"""Chat histories exported from ChatGPT and Claude: one document per conversation, dated, each message a section
titled by its author ("user" or "assistant"), its Markdown read as Markdown (a code block in an answer stays code).

Both exports are a ``conversations.json`` holding a list of conversations; which one it is, is told by shape:

ChatGPT (Settings → Data controls → Export)::

    [{"title": "...", "create_time": 1714557600.5, "conversation_id": "...", "current_node": "n3",
      "mapping": {"n1": {"id": "n1", "message": null, "parent": null, "children": ["n2"]},
                  "n2": {"id": "n2", "parent": "n1", "children": ["n3"],
                         "message": {"author": {"role": "user"}, "content": {"content_type": "text",
                                                                             "parts": ["..."]}}}, ...}}]

  Messages form a tree (an edited question branches it); the conversation as last shown is the path from
  ``current_node`` up to the root. System and tool messages, and parts that are not text (images), are left out.

Claude (Settings → Privacy → Export data)::

    [{"uuid": "...", "name": "...", "created_at": "2024-05-01T10:00:00.000000Z",
      "chat_messages": [{"sender": "human", "text": "...", "created_at": "..."},
                        {"sender": "assistant", "text": "...", ...}]}]

A ``.json`` file that is neither is refused with the shapes it was expected to have; a conversation with no
message to read is reported on its own (its position in the list), and the others are read.
"""

from __future__ import annotations

import datetime as dt
import json
from collections.abc import Iterator
from typing import Any, TypeVar

from explorer.reading.formats import Reading, Section
from explorer.reading.formats.markdown import read_markdown

SHAPES = (
    "a chat export: ChatGPT's conversations.json (conversations with a title and a mapping of messages) "
    "or Claude's (conversations with a name and chat_messages)"
)
_AUTHORS = {"user": "user", "human": "user", "assistant": "assistant"}


def read_chat_export(text: str) -> list[Reading | ValueError]:
    """Each conversation of an export as a :class:`Reading`, or the ``ValueError`` saying why it has nothing to
    read; a ``ValueError`` for the whole file when it is not an export of either kind.
    """
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        raise ValueError(f"malformed JSON ({exc.msg} at line {exc.lineno})") from None
    if not isinstance(data, list) or not data or not all(isinstance(item, dict) for item in data):
        raise ValueError(f"not {SHAPES}")
    if all("mapping" in item for item in data):
        conversations = [_chatgpt(item) for item in data]
    elif all("chat_messages" in item for item in data):
        conversations = [_claude(item) for item in data]
    else:
        raise ValueError(f"not {SHAPES}")
    return [_reading(*conversation) for conversation in conversations]


Conversation = tuple[str | None, str | None, str | None, list[tuple[str, str]]]  # title, date, address, messages


def _reading(
    title: str | None, date: str | None, source: str | None, messages: list[tuple[str, str]]
) -> Reading | ValueError:
    sections = tuple(
        Section(section.text, author, section.code)
        for author, text in messages
        if text.strip()
        for section in _markdown_sections(text)
    )
    if not sections:
        return ValueError(f"conversation {title or '(untitled)'!r} has no message to read")
    return Reading(sections, title=title, year=date, source=source)


def _markdown_sections(text: str) -> tuple[Section, ...]:
    try:
        return read_markdown(text).sections
    except ValueError:  # a message of markup alone (an image, a rule)
        return ()


def _chatgpt(item: dict[str, Any]) -> Conversation:
    mapping = _of(item.get("mapping"), dict)
    messages = [message for node in _branch(mapping, item.get("current_node")) if (message := _chatgpt_message(node))]
    created = item.get("create_time")
    date = dt.datetime.fromtimestamp(created, dt.UTC).date().isoformat() if isinstance(created, (int, float)) else None
    conversation = item.get("conversation_id") or item.get("id")
    source = f"https://chatgpt.com/c/{conversation}" if isinstance(conversation, str) and conversation else None
    return _text(item.get("title")), date, source, messages


def _branch(mapping: dict[str, Any], current: object) -> Iterator[dict[str, Any]]:
    """The messages on the path from the root to ``current`` (else to the last node), in order, each once."""
    if not isinstance(current, str) or current not in mapping:
        current = next(reversed(mapping), None)
    path: list[dict[str, Any]] = []
    seen: set[str] = set()
    while isinstance(current, str) and current in mapping and current not in seen:
        seen.add(current)
        node = mapping[current] if isinstance(mapping[current], dict) else {}
        path.append(node)
        current = node.get("parent")
    return reversed(path)


def _chatgpt_message(node: dict[str, Any]) -> tuple[str, str] | None:
    message = node.get("message")
    if not isinstance(message, dict):
        return None
    role = (message.get("author") or {}).get("role")
    content = message.get("content") or {}
    if role not in _AUTHORS or not isinstance(content, dict):
        return None
    parts = _of(content.get("parts"), list) or [content.get("text")]
    text = "\n\n".join(part for part in parts if isinstance(part, str))
    return (_AUTHORS[role], text) if text.strip() else None


def _claude(item: dict[str, Any]) -> Conversation:
    messages = []
    for message in item.get("chat_messages") or []:
        if not isinstance(message, dict) or message.get("sender") not in _AUTHORS:
            continue
        text = message.get("text")
        if not isinstance(text, str) or not text.strip():
            blocks = _of(message.get("content"), list)
            text = "\n\n".join(b["text"] for b in blocks if isinstance(b, dict) and isinstance(b.get("text"), str))
        messages.append((_AUTHORS[message["sender"]], text))
    created = item.get("created_at")
    uuid = item.get("uuid")
    source = f"https://claude.ai/chat/{uuid}" if isinstance(uuid, str) and uuid else None
    return _text(item.get("name")), created[:10] if isinstance(created, str) else None, source, messages


_Kind = TypeVar("_Kind", dict, list)


def _of(value: object, kind: type[_Kind]) -> _Kind:
    """``value`` when it is of ``kind``, else an empty one: an export's fields are checked, not trusted."""
    return value if isinstance(value, kind) else kind()


def _text(value: object) -> str | None:
    return value.strip() or None if isinstance(value, str) else None
