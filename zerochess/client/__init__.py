"""Other engines as UCI child processes: the one client of the match runner, the teacher
and the label pipeline (``zerochess.client.uci``).

The client starts an engine, completes the handshake, sets its options, asks it to search
and reads its answer; each user keeps its own policy on top: the match runner its clocks,
adjudication and forfeits (``zerochess.match``), the teacher its restarts and labels
(``zerochess.train.data.teacher``). It knows nothing of zerochess's own engine, only of
python-chess and the UCI protocol.
"""
