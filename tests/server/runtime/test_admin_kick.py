"""The organiser's ``kick``: the connection that asks cannot kick itself (#38: the organiser's page cut itself off)."""

from __future__ import annotations

from tests.server.conftest import connect
from tests.server.runtime.test_hostile import ADMIN, admin


async def test_the_organiser_cannot_kick_its_own_connection(start_server, autojump_clock):
    server = await start_server(admin_token=ADMIN)
    async with connect(server, "org") as org, connect(server, "a") as a:
        listing = {c["client"]: c["conn"] for c in (await admin(org, "connections"))["connections"]}
        refused = await admin(org, "kick", conn=listing["org"])
        assert refused["type"] == "error" and refused["code"] == "bad_field" and "itself" in refused["message"]
        assert org.closed is None and (await admin(org, "connections"))["type"] == "connections"
        assert (await admin(org, "kick", conn=listing["a"]))["type"] == "ok"  # any other one still goes
