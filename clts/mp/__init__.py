"""Exact matrix profile: ``matrix_profile``, ``motifs``, ``discords``, after STOMP / GPU-STOMP
(Zhu et al., "Exploiting a novel algorithm and GPUs to break the ten quadrillion pairwise
comparisons barrier for time series motifs and joins", Knowledge and Information Systems 2017)."""
from .api import MatrixProfileResult, matrix_profile
from .aamp import aamp
from .chains import allc, atsc
from .fluss import fluss
from .floss import Floss, floss
from .mass import mass, match
from .motifs import discords, motifs
from .mstump import mstump
from .mdl import mdl
from .mmotifs import mmotifs
from .mpdist import mpdist, mpdist_vect
from .ostinato import Consensus, ostinato
from .snippets import snippets
from .prescrump import prescrump
from .scrump import Scrump, scrump
from .stimp import Stimp, stimp
from .subspace import subspace
from .stream import StreamingProfile, stumpi
from .plan import Plan

__all__ = ["matrix_profile", "MatrixProfileResult", "motifs", "discords", "Plan", "mass", "match", "fluss",
           "stumpi", "StreamingProfile", "aamp", "mstump", "mdl", "subspace", "mpdist", "mpdist_vect",
           "ostinato", "Consensus", "snippets", "scrump", "Scrump", "prescrump", "stimp", "Stimp",
           "allc", "atsc", "floss", "Floss", "mmotifs"]
