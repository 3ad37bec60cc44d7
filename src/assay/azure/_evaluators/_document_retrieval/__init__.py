"""``from azure.ai.evaluation._evaluators._document_retrieval import ...``, where the peer keeps it."""

from assay.azure.nlp import DocumentRetrievalEvaluator, RetrievalGroundTruthDocument, RetrievedDocument

__all__ = ["DocumentRetrievalEvaluator", "RetrievalGroundTruthDocument", "RetrievedDocument"]
