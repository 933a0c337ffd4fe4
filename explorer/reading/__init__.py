"""The READING cycle (rem-rag.md): load, chunk, embed, implant, entities."""
