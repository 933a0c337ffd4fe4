"""The READING cycle (docs/reading.md): load, chunk, embed, implant, entities."""
