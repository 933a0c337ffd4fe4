"""Findings back into a person's notes: each approved crystal and each kept dream as a Markdown note in a folder
of their vault (Obsidian, Logseq), kept in step with the store by ``explorer export --notes DIR``.

``render`` turns findings into note texts and file names (pure); ``folder`` writes them, leaving alone what is
unchanged and removing only the notes it wrote itself; ``service`` reads the findings from the store and runs both.
"""
