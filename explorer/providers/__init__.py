"""Model providers: embeddings and the LLM gateway (litellm, or the offline provider)."""
