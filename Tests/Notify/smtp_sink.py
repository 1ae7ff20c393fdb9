"""A real SMTP server for the notification tests (Debian's python3-aiosmtpd) on loopback.

Usage: smtp_sink.py OUT_DIR [PORT]. Prints the port it listens on, then writes each message it
accepts to OUT_DIR/<n>.eml (the raw bytes) and OUT_DIR/<n>.json (envelope sender and recipients, and
accepted_at: when the message was accepted, in seconds since the epoch).
"""
import asyncio
import json
import os
import socket
import sys
import time

from aiosmtpd.controller import Controller


class Sink:
    def __init__(self, out):
        self.out = out
        self.count = 0

    async def handle_DATA(self, server, session, envelope):
        accepted_at = time.time()
        self.count += 1
        base = os.path.join(self.out, "%06d" % self.count)
        with open(base + ".eml.tmp", "wb") as f:
            f.write(envelope.original_content or envelope.content)
        with open(base + ".json", "w") as f:
            json.dump({"from": envelope.mail_from, "to": envelope.rcpt_tos, "accepted_at": accepted_at}, f)
        os.rename(base + ".eml.tmp", base + ".eml")
        return "250 OK"


def main():
    out = sys.argv[1]
    port = int(sys.argv[2]) if len(sys.argv) > 2 else 0
    if port == 0:
        with socket.socket() as s:
            s.bind(("127.0.0.1", 0))
            port = s.getsockname()[1]
    controller = Controller(Sink(out), hostname="127.0.0.1", port=port)
    controller.start()
    print(port, flush=True)
    try:
        asyncio.get_event_loop().run_forever()
    except KeyboardInterrupt:
        pass
    finally:
        controller.stop()


if __name__ == "__main__":
    main()
