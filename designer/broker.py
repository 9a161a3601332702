"""The embedded broker: kombu's filesystem transport, with messages written whole.

kombu's filesystem channel creates a message file under its final name and only
then writes the message into it. A worker polling the folder can take the file
in between and read it empty: the worker dies on a JSON decode error and the
message is lost (seen as a ping that no worker answered). Here a message is
written under a name the worker's poll skips, then renamed into place; a rename
within one folder is atomic, so a worker sees a whole message or none.

``designer.celery`` registers this transport for ``filesystem://`` URLs, so the
setting people write stays kombu's own.
"""

from __future__ import annotations

import os
import uuid
from time import monotonic
from typing import Any

from kombu.exceptions import ChannelError
from kombu.transport import TRANSPORT_ALIASES, filesystem
from kombu.utils.encoding import str_to_bytes
from kombu.utils.json import dumps

__all__ = ["Channel", "Transport", "register"]

# A message waiting to be renamed into place ends in this: kombu's poll takes only
# names ending ".<queue>.msg".
PARTIAL = ".part"


class Channel(filesystem.Channel):
    """A filesystem channel whose messages appear in the queue folder whole."""

    # kombu names the argument ``payload`` here and ``message`` in the base channel; we
    # follow the class we override.
    def _put(self, queue: Any, payload: Any, **kwargs: Any) -> Any:  # type: ignore[override]
        name = f"{round(monotonic() * 1000)}_{uuid.uuid4()}.{queue}.msg"
        final = os.path.join(self.data_folder_out, name)
        partial = final + PARTIAL
        try:
            with open(partial, "wb") as f:
                f.write(str_to_bytes(dumps(payload)))
            os.replace(partial, final)
        except OSError as exc:
            raise ChannelError(f"Cannot add file {final!r} to directory") from exc


class Transport(filesystem.Transport):
    Channel = Channel


def register() -> None:
    """Make ``filesystem://`` broker URLs use :class:`Transport`."""
    TRANSPORT_ALIASES["filesystem"] = f"{__name__}:Transport"
