"""Dream Explorer: let a model wander and dream over a body of knowledge.

The package is the engine; it never imports Streamlit. Surfaces (the CLI, the
Streamlit pages) call into it and only orchestrate.
"""

__version__ = "0.1.0"
