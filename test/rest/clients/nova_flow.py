"""Nova's own Cyborg client (nova.accelerator.cyborg from python3-nova) through a server's boot.

Reads {"endpoint", "user_token", "service_token", "profile", "hostname", "rp", "instance"} on
stdin and does what Nova's conductor and compute manager do: read the profile's request groups,
create the ARQs and match them to the resource provider, bind them in one PATCH, wait for the
binds to resolve as the compute manager does (GET ?instance=, keeping the resolved ones), read
the ARQs with their attach handles, then delete by instance (and, for ARQs that never bound, by
uuid). The user's token goes as X-Auth-Token and Nova's service token as X-Service-Token
([service_user] send_service_user_token, required since CVE-2026-40214; auth_type admin_token
with a service token of cyborg-es's token file). Prints one JSON object with what it saw.
"""
import json
import os
import sys
import tempfile
import time

spec = json.load(sys.stdin)

conf = tempfile.NamedTemporaryFile("w", suffix=".conf", delete=False)
conf.write(f"""
[cyborg]
endpoint_override = {spec["endpoint"]}
[service_user]
send_service_user_token = true
auth_type = admin_token
endpoint = {spec["endpoint"]}
token = {spec["service_token"]}
""")
conf.close()

import nova.conf  # noqa: E402
from nova import context as nova_context  # noqa: E402
from nova import objects  # noqa: E402

nova.conf.CONF([], project="nova", default_config_files=[conf.name])
os.unlink(conf.name)
objects.register_all()

from nova.accelerator import cyborg  # noqa: E402

ctx = nova_context.RequestContext(user_id="demo", project_id="demo", auth_token=spec["user_token"])
client = cyborg.get_client(ctx)
out = {}

# Conductor: the flavor's accel:device_profile becomes Placement request groups, then ARQs bound to the chosen RP.
groups = cyborg.get_device_profile_request_groups(ctx, spec["profile"])
out["request_groups"] = [{"requester_id": g.requester_id, "resources": dict(g.resources), "traits": sorted(g.required_traits)} for g in groups]
rg_rp_map = {g.requester_id: [spec["rp"]] for g in groups}
arqs = client.create_arqs_and_match_resource_providers(spec["profile"], rg_rp_map)
out["created"] = [{"uuid": a["uuid"], "state": a["state"], "group": a["device_profile_group_id"]} for a in arqs]
bindings = {a["uuid"]: {"hostname": spec["hostname"], "device_rp_uuid": a["device_rp_uuid"], "instance_uuid": spec["instance"]} for a in arqs}
client.bind_arqs(bindings)

# Compute: wait for the binds, reading the instance's ARQs (Nova keeps the resolved ones).
deadline = time.time() + 20
resolved = []
while time.time() < deadline:
    resolved = client.get_arqs_for_instance(spec["instance"], only_resolved=True)
    if len(resolved) == len(arqs):
        break
    time.sleep(0.05)
out["resolved"] = resolved
out["by_uuid"] = [client.get_arq_by_uuid(a["uuid"]) for a in arqs]
out["uuids_for_instance"] = sorted(client.get_arq_uuids_for_instance(type("Instance", (), {"uuid": spec["instance"]})()))

# Instance delete: by instance (idempotent), and by uuid for ARQs that never bound.
client.delete_arqs_for_instance(spec["instance"])
client.delete_arqs_for_instance(spec["instance"])
unbound = client.create_arqs(spec["profile"])
client.delete_arqs_by_uuid([a["uuid"] for a in unbound])
after = client._client.get("/accelerator_requests", params={"instance": spec["instance"]})
out["after_delete"] = {"status": after.status_code, "body": after.json()}
out["unbound_after_delete"] = [client._client.get("/accelerator_requests/" + a["uuid"]).status_code for a in unbound]

json.dump(out, sys.stdout)
