"""A Nova scheduler weigher that prefers hosts with the accelerators a flavor's device profile asks for.

cyborg-es ranks the hosts the filters kept for the flavor's ``accel:device_profile``
(GET /weigher/v1/hosts?device_profile=<name>&host=<host>...): hosts whose free accelerators fit
every request group first, then hosts with free FPGA regions already running the function the
profile needs (no programming at boot), then hosts with more free accelerators. A flavor without
a device profile, or a cyborg-es that cannot be reached, weighs every host the same (0): the
weigher never stops a boot.

Enable it in nova.conf of the scheduler, with contrib/nova on the scheduler's Python path::

    [filter_scheduler]
    weight_classes = nova.scheduler.weights.all_weighers,cyborg_es_weigher.AcceleratorWeigher

    [cyborg_es_weigher]
    # Where cyborg-es answers (its base URL; the weigher adds /weigher/v1/hosts).
    url = http://controller:4000
    # How much this weigher counts beside the others (Nova's weigher multipliers).
    weight_multiplier = 1.0
    # keystoneauth's session options also apply (timeout: default 5 s here, cafile, insecure, ...).
    timeout = 5
    # Any keystoneauth plugin: a service user's password, or a token of cyborg-es's token file
    # (a role with resource_provider:read: service, admin or manager).
    auth_type = admin_token
    endpoint = http://controller:4000
    token = <token>

docs/weigher.md says more.
"""
from keystoneauth1 import loading as ks_loading
from oslo_config import cfg
from oslo_log import log as logging

from nova.scheduler import weights

LOG = logging.getLogger(__name__)
CONF = cfg.CONF
GROUP = "cyborg_es_weigher"
PATH = "/weigher/v1/hosts"

OPTS = [
    cfg.StrOpt("url", help="cyborg-es's base URL, e.g. http://controller:4000"),
    cfg.FloatOpt("weight_multiplier", default=1.0, help="Multiplier of this weigher's normalized weight"),
]


def register_opts(conf=CONF):
    conf.register_opts(OPTS, group=GROUP)
    ks_loading.register_session_conf_options(conf, GROUP)
    ks_loading.register_auth_conf_options(conf, GROUP)


register_opts()


def device_profile_of(spec_obj):
    """The flavor's accel:device_profile, or None."""
    flavor = getattr(spec_obj, "flavor", None)
    extra_specs = (getattr(flavor, "extra_specs", None) or {}) if flavor is not None else {}
    return extra_specs.get("accel:device_profile")


class AcceleratorWeigher(weights.BaseHostWeigher):
    """Weighs hosts by what cyborg-es says they can still give the flavor's device profile."""

    # cyborg-es answers 0 to 1: keep its scale rather than stretch the hosts' spread.
    minval = 0.0
    maxval = 1.0

    def __init__(self):
        self._session = None

    def weight_multiplier(self, host_state):
        return CONF[GROUP].weight_multiplier

    def _weigh_object(self, host_state, weight_properties):
        # weigh_objects asks cyborg-es once for every host; this is its single-host form.
        return self._weights([host_state.host], device_profile_of(weight_properties)).get(host_state.host, 0.0)

    def weigh_objects(self, weighed_obj_list, weight_properties):
        hosts = [o.obj.host for o in weighed_obj_list]
        by_host = self._weights(hosts, device_profile_of(weight_properties))
        return [by_host.get(h, 0.0) for h in hosts]

    def _weights(self, hosts, profile):
        if not profile or not hosts:
            return {}
        conf = CONF[GROUP]
        if not conf.url:
            LOG.warning("cyborg_es_weigher: [%s] url is not set; every host weighs the same", GROUP)
            return {}
        params = [("device_profile", profile)] + [("host", h) for h in sorted(set(hosts))]
        try:
            # keystoneauth's [cyborg_es_weigher] timeout, or 5 s: the scheduler does not wait long.
            resp = self._client().get(conf.url.rstrip("/") + PATH, params=params, timeout=conf.timeout or 5, raise_exc=False)
        except Exception as e:  # the scheduler goes on without this weigher's opinion
            LOG.warning("cyborg_es_weigher: cyborg-es at %s cannot be reached (%s); every host weighs the same", conf.url, e)
            return {}
        if resp.status_code != 200:
            LOG.warning("cyborg_es_weigher: cyborg-es answered %s for device profile %s: %s; every host weighs the same", resp.status_code, profile, resp.text[:500])
            return {}
        return {h["hostname"]: float(h["weight"]) for h in resp.json()["hosts"]}

    def _client(self):
        if self._session is None:
            auth = ks_loading.load_auth_from_conf_options(CONF, GROUP)
            self._session = ks_loading.load_session_from_conf_options(CONF, GROUP, auth=auth)
        return self._session
