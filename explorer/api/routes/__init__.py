"""The API's routers, one per area: sessions and control, memory, cross-session queries, interventions, runs
and jobs.
"""
