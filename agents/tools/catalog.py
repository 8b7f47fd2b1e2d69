"""Every built-in agent tool, listed explicitly: the registry is built from this tuple (AgentsConfig.ready).

A new tool is a class in its domain's module plus one line here. The order here does not matter: the
model sees the tools in tools_visible's order.
"""

from agents.tools.base import Tool
from agents.tools.base_tools import AskUser, LoadTools, ReadArtifact, ReadTaskState, SearchAssets, UpdateChecklist
from agents.tools.documents import EditDocument, WriteDocument
from agents.tools.flows import EditFlowNodes, RunFlow
from agents.tools.generation import Generate3D, GenerateImage, GenerateVideo
from agents.tools.goals import ReviseGoal
from agents.tools.guides import ReadGuide
from agents.tools.readback import ReadHistory, ReadToolResult

TOOLS: tuple[type[Tool], ...] = (
    # base: always visible
    ReadTaskState,
    UpdateChecklist,
    ReadArtifact,
    SearchAssets,
    AskUser,
    LoadTools,
    ReadToolResult,
    ReadHistory,
    ReviseGoal,
    ReadGuide,
    # image, video, 3d
    GenerateImage,
    GenerateVideo,
    Generate3D,
    # documents
    WriteDocument,
    EditDocument,
    # flows
    EditFlowNodes,
    RunFlow,
)
