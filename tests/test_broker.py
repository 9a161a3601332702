"""The embedded broker writes each message whole before a worker can take it."""

from __future__ import annotations

import os
from queue import Empty

import pytest
from kombu import Connection

from designer import broker


@pytest.fixture
def channel(tmp_path):
    options = {
        "data_folder_in": str(tmp_path),
        "data_folder_out": str(tmp_path),
        "control_folder": str(tmp_path / "control"),
    }
    with Connection("filesystem://", transport_options=options) as connection:
        yield connection.default_channel


def test_filesystem_urls_use_the_broker_that_writes_messages_whole(channel):
    assert isinstance(channel, broker.Channel)


def test_a_poll_while_a_message_is_written_finds_nothing(channel, monkeypatch):
    polls = []
    rename = os.replace

    def replace(source, target):
        with pytest.raises(Empty):
            channel._get("jobs")
        polls.append(target)
        rename(source, target)

    monkeypatch.setattr(broker.os, "replace", replace)
    channel._put("jobs", {"body": "hello"})
    assert len(polls) == 1
    assert channel._get("jobs") == {"body": "hello"}


def test_a_message_put_is_taken_once(channel):
    channel._put("jobs", {"body": "once"})
    assert channel._get("jobs") == {"body": "once"}
    with pytest.raises(Empty):
        channel._get("jobs")
