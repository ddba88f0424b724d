"""Loads contrib/nova's weigher into the real Nova's weigher handler, as the scheduler does.

Reads {"url", "token", "profile", "hosts", "multiplier"} on stdin; writes a nova.conf whose
[filter_scheduler] weight_classes names the weigher, loads the classes the way
nova.scheduler.host_manager.HostManager does, weighs a HostState per host for a RequestSpec whose
flavor has accel:device_profile=<profile> (none when profile is null), and prints the weighed hosts
in Nova's order.
"""
import json
import os
import sys
import tempfile

spec = json.load(sys.stdin)
sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "..", "contrib", "nova"))

conf = tempfile.NamedTemporaryFile("w", suffix=".conf", delete=False)
conf.write(f"""
[filter_scheduler]
weight_classes = cyborg_es_weigher.AcceleratorWeigher
[cyborg_es_weigher]
url = {spec["url"]}
weight_multiplier = {spec.get("multiplier", 1.0)}
auth_type = admin_token
endpoint = {spec["url"]}
token = {spec["token"]}
""")
conf.close()

import nova.conf  # noqa: E402
from nova import objects  # noqa: E402
from nova.scheduler import host_manager  # noqa: E402
from nova.scheduler import weights  # noqa: E402

CONF = nova.conf.CONF
CONF([], project="nova", default_config_files=[conf.name])
os.unlink(conf.name)
objects.register_all()

handler = weights.HostWeightHandler()
weighers = [cls() for cls in handler.get_matching_classes(CONF.filter_scheduler.weight_classes)]
hosts = [host_manager.HostState(h, h + "-node", "cell1") for h in spec["hosts"]]
extra_specs = {"accel:device_profile": spec["profile"]} if spec["profile"] else {}
request = objects.RequestSpec(flavor=objects.Flavor(name="f1", extra_specs=extra_specs))
weighed = handler.get_weighed_objects(weighers, hosts, request)
print(json.dumps({"weighers": [type(w).__name__ for w in weighers], "order": [[w.obj.host, w.weight] for w in weighed]}))
