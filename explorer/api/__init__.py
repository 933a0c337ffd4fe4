"""The REST API: the engine over HTTP under ``/api/v1/`` (docs/wander.md#api-endpoints, dreaming, consolidation
and jobs), for programs and agents. A surface like the CLI: it only orchestrates engine calls.
``explorer serve`` starts it; :func:`create_app` builds it.
"""

from explorer.api.app import create_app

__all__ = ["create_app"]
