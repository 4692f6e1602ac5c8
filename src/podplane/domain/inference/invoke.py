"""What one test request to an endpoint looks like, by the container serving it (pure).

- vLLM and SGLang (their "OpenAI-Compatible Server" docs): `POST /v1/completions` with
  `model`, `prompt`, `max_tokens`, or `POST /v1/chat/completions` with `messages`.
- The Large Model Inference container (DJL Serving, the image JumpStart runs for text models:
  `…/djl-inference:<version>-lmi…`): SageMaker's `POST /invocations` (djl-serving
  serving/src/main/java/ai/djl/serving/http/InferenceRequestHandler.java: `/ping`,
  `/invocations`, `/predictions/<model>`, `/v1/chat/completions`; no `/v1/completions`).
  With rolling batch the body is the LMI schema, `inputs` and `parameters` {max_new_tokens,
  details}, answered `{generated_text, details}`; a body with `messages` is a chat completion
  answered as OpenAI's (djl-serving docs, lmi/user_guides "lmi_input_output_schema" and
  "chat_input_output_schema"). The model name is not sent: the container serves one model.
"""

from __future__ import annotations

from typing import Any

Shape = dict[str, Any]
LMI_IMAGES = ("djl-inference", "djl-serving")


def is_lmi(container: Shape) -> bool:
    image = str(container.get("image") or "").rsplit("/", 1)[-1]
    return image.startswith(LMI_IMAGES)


def request_for(container: Shape, model: str, prompt: str, max_tokens: int,
                chat: bool) -> tuple[str, Shape]:
    """(path, JSON body) of one small request to the container."""
    messages = [{"role": "user", "content": prompt}]
    if is_lmi(container):
        if chat:
            return "invocations", {"messages": messages, "max_tokens": max_tokens}
        return "invocations", {"inputs": prompt, "parameters": {
            "max_new_tokens": max_tokens, "details": True}}
    if chat:
        return "v1/chat/completions", {"model": model, "max_tokens": max_tokens,
                                       "messages": messages}
    return "v1/completions", {"model": model, "prompt": prompt, "max_tokens": max_tokens}
