from inspect_ai import Task, task
from inspect_ai.dataset import Sample
from inspect_ai.model import ModelOutput, ModelUsage, get_model
from inspect_ai.scorer import includes, match
from inspect_ai.solver import generate

REPLIES = ["2", "5", "The capital is Paris."]


def reply(text: str) -> ModelOutput:
    output = ModelOutput.from_content(model="mockllm/model", content=text)
    output.usage = ModelUsage(input_tokens=12, output_tokens=3, total_tokens=15)
    return output


@task
def arith():
    return Task(
        dataset=[
            Sample(input="What is 1+1? Reply with the number.", target="2", id="one"),
            Sample(input="What is 2+2? Reply with the number.", target="4", id="two"),
            Sample(input="What is the capital of France?", target="Paris", id="three"),
        ],
        solver=generate(),
        scorer=[includes(), match()],
        model=get_model("mockllm/model", custom_outputs=[reply(t) for t in REPLIES * 4]),
    )
