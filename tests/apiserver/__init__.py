"""A test-only Kubernetes API server (HTTPS, bearer token, RBAC, faults) fed from a bundle."""

from tests.apiserver.faults import Fault, Recorded
from tests.apiserver.rbac import ALLOW_ALL, Authorizer, load_roles
from tests.apiserver.server import ApiServer

__all__ = ["ALLOW_ALL", "ApiServer", "Authorizer", "Fault", "Recorded", "load_roles"]
