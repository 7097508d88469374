class ScheduleState:
    @staticmethod
    def replay(op):
        return None
